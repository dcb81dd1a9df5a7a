//! `verify --ranks N`: the partitioned program lowered to PartIR:HLO, its local signature
//! checked against the original's shardings, wrapped in an SPMD harness and lowered to MPI.

use super::{
    keep,
    program::{main_function, make_main_private, signature, Signature},
    Job,
};
use crate::cli::{
    args::VerifyArgs,
    error::CliError,
    padding,
    partition::lower_to_hlo,
    pipeline::Session,
    progress::Step,
    runner::{self, Input, TensorType},
    spmd,
};
use crate::ir::Mesh;
use crate::passes::Stage;
use melior::ir::Module;

/// What `verify --ranks N` needs besides the two modules.
pub(super) struct Spmd<'a, 's> {
    pub(super) args: &'a VerifyArgs,
    pub(super) ranks: usize,
    pub(super) session: &'s Session,
    pub(super) signature: &'a Signature,
    pub(super) inputs: &'a [Input],
}

impl<'s> Spmd<'_, 's> {
    /// Lowers the partitioned module to PartIR:HLO (unless it is already) and makes the MPI
    /// program; (the original's harness, the partitioned job).
    pub(super) fn prepare<'c>(
        &self,
        original: &mut Module<'c>,
        partitioned: &mut Module<'c>,
        form: Stage,
    ) -> Result<(String, Job), CliError>
    where
        's: 'c,
    {
        let session = self.session;
        if form == Stage::Core {
            lower_to_hlo(session, partitioned)?;
        }
        if super::upstream::is_stablehlo(partitioned) {
            let step = Step::start("converting the partitioned StableHLO to linalg");
            match super::upstream::to_upstream(session, partitioned, "the partitioned program") {
                Ok(module) => {
                    step.done();
                    *partitioned = module;
                }
                Err(error) => {
                    step.failed();
                    return Err(error);
                }
            }
        }
        let (mesh, _) = Mesh::find(partitioned.as_operation())
            .ok_or_else(|| CliError::new("the partitioned program declares no partir.mesh"))?;
        if self.ranks as i64 != mesh.devices() {
            return Err(CliError::new(format!(
                "--ranks {} does not match the mesh @{} ({}): run on {} ranks, one per device",
                self.ranks,
                mesh.symbol,
                mesh.axes
                    .iter()
                    .map(|axis| format!("{}={}", axis.name, axis.size))
                    .collect::<Vec<_>>()
                    .join(" x "),
                mesh.devices()
            )));
        }
        let (arg_shardings, res_shardings) = spmd::shardings(main_function(partitioned)?);
        let local = signature(partitioned)?;
        // An argument or result seen expanded (`partir.view_of`, a fused dim as its factors) is
        // the original's, read row-major as the program's global type.
        let (arg_views, res_views) = crate::passes::expand_dim::views(main_function(partitioned)?);
        // An argument or result padded (`partir.padding`, a dim an axis does not divide) is the
        // original's with zeros at the end of each of its chunks: padded before it is sharded,
        // and the padding dropped from a result after it is gathered.
        let (arg_padding, res_padding) = crate::passes::expand_dim::entry_arrays(
            main_function(partitioned)?,
            crate::passes::pad_dim::PADDING_ATTR,
        );
        let mut inputs_global = program_globals(
            &self.signature.inputs,
            &arg_views,
            &arg_shardings,
            &local.inputs,
            &mesh,
        );
        let mut outputs_global = program_globals(
            &self.signature.outputs,
            &res_views,
            &res_shardings,
            &local.outputs,
            &mesh,
        );
        for (globals, padding) in [
            (&mut inputs_global, &arg_padding),
            (&mut outputs_global, &res_padding),
        ] {
            for (global, steps) in globals.iter_mut().zip(padding) {
                if let Some(steps) = steps {
                    global.shape = padding::padded_shape(&global.shape, steps);
                }
            }
        }
        if local.inputs.len() != self.signature.inputs.len()
            || local.outputs.len() != self.signature.outputs.len()
        {
            return Err(CliError::new(format!(
                "the partitioned program's @main takes {} arguments and returns {} results; the original's {} and {}",
                local.inputs.len(),
                local.outputs.len(),
                self.signature.inputs.len(),
                self.signature.outputs.len()
            )));
        }
        let check = |what: &str, global: &TensorType, sharding, local: Option<&TensorType>| {
            let expected = spmd::local_type(global, sharding, &mesh)
                .map_err(|error| CliError::new(format!("@main {what}: {error}")))?;
            match local {
                Some(local) if *local == expected => Ok(()),
                _ => Err(CliError::new(format!(
                    "@main {what} of the PartIR:HLO program is {}, but its sharding makes {global} {expected} per device",
                    local.map_or("missing".into(), ToString::to_string)
                ))),
            }
        };
        for (i, ty) in inputs_global.iter().enumerate() {
            check(
                &format!("argument {i}"),
                ty,
                arg_shardings.get(i).and_then(Option::as_ref),
                local.inputs.get(i),
            )?;
        }
        for (j, ty) in outputs_global.iter().enumerate() {
            check(
                &format!("result {j}"),
                ty,
                res_shardings.get(j).and_then(Option::as_ref),
                local.outputs.get(j),
            )?;
        }
        make_main_private(session.context(), partitioned)?;
        let hlo = partitioned.as_operation().to_string();
        let harness_inputs: Vec<_> = self
            .inputs
            .iter()
            .enumerate()
            .map(|(i, input)| {
                let mut input = match arg_padding.get(i) {
                    Some(Some(steps)) => padding::pad_input(input, steps),
                    _ => input.clone(),
                };
                input.ty = inputs_global[i].clone();
                (input, arg_shardings.get(i).and_then(Option::as_ref))
            })
            .collect();
        let outputs: Vec<spmd::Sharded> = outputs_global
            .iter()
            .enumerate()
            .map(|(j, global)| spmd::Sharded {
                global,
                sharding: res_shardings.get(j).and_then(Option::as_ref),
            })
            .collect();
        let spmd_harness = spmd::harness(&hlo, &mesh, &harness_inputs, &outputs)?;
        make_main_private(session.context(), original)?;
        let original_harness = runner::harness(
            &original.as_operation().to_string(),
            self.inputs,
            &self.signature.outputs,
        )?;
        if let Some(dir) = &self.args.keep {
            keep(dir, &[("spmd-harness.mlir", &spmd_harness)])?;
        }
        let step = Step::start("lowering the collectives to MPI (partir-to-mpi)");
        let mpi_program =
            spmd::to_mpi(session, &spmd_harness).inspect_err(|_| eprintln!("failed"))?;
        step.done();
        Ok((
            original_harness,
            Job::Spmd {
                mpi_program,
                ranks: self.ranks,
                unpad: outputs_global
                    .iter()
                    .zip(res_padding.iter().chain(std::iter::repeat(&None)))
                    .map(|(global, steps)| {
                        steps
                            .as_ref()
                            .map(|steps| (global.shape.clone(), steps.clone()))
                    })
                    .collect(),
            },
        ))
    }
}

/// The global types the partitioned program's signature means: the original's, or, for an
/// argument or result seen expanded (`partir.view_of`), its local type times its sharding
/// (the same elements, read row-major).
fn program_globals(
    original: &[TensorType],
    views: &crate::passes::expand_dim::Views,
    shardings: &[Option<crate::ir::Sharding>],
    local: &[TensorType],
    mesh: &Mesh,
) -> Vec<TensorType> {
    original
        .iter()
        .enumerate()
        .map(|(i, global)| {
            let (Some(Some(_)), Some(local)) = (views.get(i), local.get(i)) else {
                return global.clone();
            };
            let shape: Vec<i64> = local.shape.iter().map(|&size| size as i64).collect();
            let shape = match shardings.get(i).and_then(Option::as_ref) {
                Some(sharding) => sharding.global_shape_on(&shape, mesh),
                None => shape,
            };
            let expanded = TensorType {
                shape: shape.iter().map(|&size| size as usize).collect(),
                elem: global.elem,
            };
            let same_count =
                expanded.shape.iter().product::<usize>() == global.shape.iter().product::<usize>();
            if same_count {
                expanded
            } else {
                global.clone()
            }
        })
        .collect()
}
