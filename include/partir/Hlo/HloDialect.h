//===- HloDialect.h - PartIR:HLO dialect ---------------------------------===//
#ifndef PARTIR_HLO_HLODIALECT_H
#define PARTIR_HLO_HLODIALECT_H

#include "partir/Core/CoreDialect.h"

#include "partir/Hlo/HloDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "partir/Hlo/HloAttrs.h.inc"

#define GET_OP_CLASSES
#include "partir/Hlo/HloOps.h.inc"

#endif
