//! GSPMD's sharding strings (`mhlo.sharding`, what `jax.jit` writes when Shardy is off, and
//! what programs exported before Shardy carry), read as the mesh axes splitting each dim.
//!
//! A string lists devices, not axes: `{devices=[4,1,2]<=[8] last_tile_dim_replicate}` is a
//! 4x1 grid of tiles, each held by 2 devices, the devices numbered by `iota(8)`. On the mesh
//! `{ batch = 4, model = 2 }` (devices row-major: device = 2·batch + model) that is dim 0
//! split on `batch`, replicated on `model`. The axes are found by trying each
//! assignment of the mesh's axes to the tiled dims and keeping the one that puts every device
//! on the tile the string puts it on:
//!
//! ```text
//! mesh { a = 2, b = 4 }, devices row-major: device = 4·a + b
//! {devices=[4,2]<=[2,4]T(1,0)}: iota(8) as 2x4, transposed, = [0,4,1,5,2,6,3,7] over 4x2 tiles
//!   tile (i, j) holds device 4·j + i: dim 0 on "b", dim 1 on "a"   (PartitionSpec("b", "a"))
//! ```

use crate::ir::Mesh;

/// A parsed GSPMD sharding.
#[derive(Clone, Debug, PartialEq)]
pub enum HloSharding {
    /// `{replicated}`: whole on every device.
    Replicated,
    /// `{devices=[t0,...,tn(,r)]...}`: `tiles[i]` tiles along dim i; each tile held by
    /// `replicas` devices (the last tile dim, with `last_tile_dim_replicate`); `devices` the
    /// tile assignment, row-major over `tiles ++ [replicas]`.
    Tiled {
        tiles: Vec<i64>,
        replicas: i64,
        devices: Vec<i64>,
    },
}

impl HloSharding {
    /// Parses a printed sharding; an error names what partir does not read (`maximal`,
    /// `manual`, tuples, subgroups of manual dims).
    pub fn parse(text: &str) -> Result<HloSharding, String> {
        let body = text
            .trim()
            .strip_prefix('{')
            .and_then(|body| body.strip_suffix('}'))
            .ok_or_else(|| format!("'{text}' is not a sharding"))?
            .trim();
        if body.starts_with('{') {
            return Err("a tuple sharding is not read".into());
        }
        let words: Vec<&str> = body.split_whitespace().collect();
        let first = *words.first().unwrap_or(&"");
        if first == "replicated" {
            return Ok(HloSharding::Replicated);
        }
        let Some(assignment) = first.strip_prefix("devices=[") else {
            return Err(format!(
                "'{first}' shardings are not read (only tiled and replicated ones)"
            ));
        };
        let mut replicate_last = false;
        for word in &words[1..] {
            match *word {
                "last_tile_dim_replicate" | "last_tile_dims={replicated}" => replicate_last = true,
                other if other.starts_with("metadata=") => {}
                other => return Err(format!("'{other}' is not read")),
            }
        }
        let (shape, list) = assignment
            .split_once(']')
            .ok_or_else(|| format!("'{text}': no closing ']' after devices"))?;
        let mut tiles = numbers(shape)?;
        let count: i64 = tiles.iter().product();
        let devices = match list.strip_prefix("<=[") {
            Some(iota) => iota_devices(iota, count)?,
            None => numbers(list)?,
        };
        if devices.len() as i64 != count || count <= 0 {
            return Err(format!(
                "'{text}': {} devices for {count} tiles",
                devices.len()
            ));
        }
        let replicas = if replicate_last {
            tiles.pop().ok_or("no tile dims")?
        } else {
            1
        };
        Ok(HloSharding::Tiled {
            tiles,
            replicas,
            devices,
        })
    }

    /// The axes of `mesh` (name, size; devices row-major, first axis major) splitting each dim,
    /// major first, as Shardy writes them; empty for a replicated sharding. An error when no
    /// assignment of the mesh's axes puts the devices where the string does.
    pub fn axes(&self, mesh: &[(String, i64)]) -> Result<Vec<Vec<String>>, String> {
        let HloSharding::Tiled {
            tiles,
            replicas,
            devices,
        } = self
        else {
            return Ok(Vec::new());
        };
        let total: i64 = mesh.iter().map(|(_, size)| size).product();
        if devices.len() as i64 != total {
            return Err(format!(
                "it names {} devices and the mesh has {total}",
                devices.len()
            ));
        }
        // Where the string puts each device: its tile's index along each dim.
        let mut placed = vec![Vec::new(); devices.len()];
        for (position, &device) in devices.iter().enumerate() {
            let slot = placed
                .get_mut(device as usize)
                .filter(|slot: &&mut Vec<i64>| slot.is_empty())
                .ok_or_else(|| format!("device {device} is out of range or listed twice"))?;
            *slot = Mesh::unravel(position as i64 / replicas, tiles);
        }
        let mut chosen = vec![Vec::new(); tiles.len()];
        if assign(
            tiles,
            0,
            mesh,
            &mut vec![false; mesh.len()],
            &mut chosen,
            &placed,
        ) {
            Ok(chosen
                .into_iter()
                .map(|axes| axes.into_iter().map(|a| mesh[a].0.clone()).collect())
                .collect())
        } else {
            Err(format!(
                "no assignment of the mesh's axes to its {tiles:?} tiles puts the devices where it does"
            ))
        }
    }
}

/// Tries ordered sets of unused mesh axes for dims `dim..` whose sizes multiply to each dim's
/// tile count, and checks a full assignment against `placed`.
fn assign(
    tiles: &[i64],
    dim: usize,
    mesh: &[(String, i64)],
    used: &mut Vec<bool>,
    chosen: &mut Vec<Vec<usize>>,
    placed: &[Vec<i64>],
) -> bool {
    if dim == tiles.len() {
        return matches(mesh, chosen, placed);
    }
    let product: i64 = chosen[dim].iter().map(|&a| mesh[a].1).product();
    if product == tiles[dim] && assign(tiles, dim + 1, mesh, used, chosen, placed) {
        return true;
    }
    if product >= tiles[dim] {
        return false;
    }
    for axis in 0..mesh.len() {
        if used[axis] || mesh[axis].1 <= 1 || tiles[dim] % (product * mesh[axis].1) != 0 {
            continue;
        }
        used[axis] = true;
        chosen[dim].push(axis);
        if assign(tiles, dim, mesh, used, chosen, placed) {
            return true;
        }
        chosen[dim].pop();
        used[axis] = false;
    }
    false
}

/// Whether splitting each dim on `chosen` axes (major first) puts every device on its tile.
fn matches(mesh: &[(String, i64)], chosen: &[Vec<usize>], placed: &[Vec<i64>]) -> bool {
    let sizes: Vec<i64> = mesh.iter().map(|(_, size)| *size).collect();
    placed.iter().enumerate().all(|(device, index)| {
        let coords = Mesh::unravel(device as i64, &sizes);
        chosen.iter().zip(index).all(|(axes, &at)| {
            axes.iter()
                .fold(0, |so_far, &axis| so_far * mesh[axis].1 + coords[axis])
                == at
        })
    })
}

fn numbers(list: &str) -> Result<Vec<i64>, String> {
    list.split(',')
        .map(|n| {
            n.trim()
                .parse::<i64>()
                .map_err(|_| format!("'{n}' is not a number"))
        })
        .collect()
}

/// `<=[8]`, `<=[2,4]T(1,0)`: `iota(count)` reshaped to the dims, transposed, flattened.
fn iota_devices(iota: &str, count: i64) -> Result<Vec<i64>, String> {
    let (dims, rest) = iota.split_once(']').ok_or("no closing ']' after '<=['")?;
    let dims = numbers(dims)?;
    if dims.iter().product::<i64>() != count {
        return Err(format!("iota {dims:?} is not {count} devices"));
    }
    let permutation = match rest.strip_prefix("T(") {
        Some(perm) => numbers(perm.strip_suffix(')').ok_or("no closing ')' after 'T('")?)?,
        None if rest.is_empty() => (0..dims.len() as i64).collect(),
        None => return Err(format!("'{rest}' after the iota is not read")),
    };
    let mut sorted = permutation.clone();
    sorted.sort();
    if sorted != (0..dims.len() as i64).collect::<Vec<_>>() {
        return Err(format!("{permutation:?} is not a permutation"));
    }
    let shape: Vec<i64> = permutation.iter().map(|&p| dims[p as usize]).collect();
    // Strides of the un-transposed iota, read in the transposed order.
    let mut strides = vec![1; dims.len()];
    for d in (0..dims.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * dims[d + 1];
    }
    Ok((0..count)
        .map(|flat| {
            let mut rest = flat;
            let mut device = 0;
            for d in (0..shape.len()).rev() {
                device += (rest % shape[d]) * strides[permutation[d] as usize];
                rest /= shape[d];
            }
            device
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::HloSharding;

    fn mesh(axes: &[(&str, i64)]) -> Vec<(String, i64)> {
        axes.iter().map(|(n, s)| (n.to_string(), *s)).collect()
    }

    fn axes(text: &str, on: &[(&str, i64)]) -> Vec<Vec<String>> {
        HloSharding::parse(text)
            .and_then(|sharding| sharding.axes(&mesh(on)))
            .unwrap_or_else(|error| panic!("{text}: {error}"))
    }

    // Each string below is what jax 0.10.2 wrote with Shardy off for the PartitionSpec named.
    #[test]
    fn reads_the_partition_specs_jax_writes() {
        let ab = [("a", 2), ("b", 4)];
        let bm = [("batch", 4), ("model", 2)];
        let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        // P("batch", None)
        assert_eq!(
            axes("{devices=[4,1,2]<=[8] last_tile_dim_replicate}", &bm),
            [s(&["batch"]), s(&[])]
        );
        // P(None, "model")
        assert_eq!(
            axes(
                "{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}",
                &bm
            ),
            [s(&[]), s(&["model"])]
        );
        // P("batch", "model")
        assert_eq!(
            axes("{devices=[4,2]<=[8]}", &bm),
            [s(&["batch"]), s(&["model"])]
        );
        // P("b", "a")
        assert_eq!(
            axes("{devices=[4,2]<=[2,4]T(1,0)}", &ab),
            [s(&["b"]), s(&["a"])]
        );
        // P(("b", "a"), None)
        assert_eq!(
            axes("{devices=[8,1]<=[2,4]T(1,0)}", &ab),
            [s(&["b", "a"]), s(&[])]
        );
        // P("b", None)
        assert_eq!(
            axes(
                "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}",
                &ab
            ),
            [s(&["b"]), s(&[])]
        );
        // An explicit device list: P("b", "a") again.
        assert_eq!(
            axes("{devices=[4,2]0,4,1,5,2,6,3,7}", &ab),
            [s(&["b"]), s(&["a"])]
        );
        assert_eq!(axes("{replicated}", &ab), Vec::<Vec<String>>::new());
    }

    #[test]
    fn says_what_it_does_not_read() {
        let ab = mesh(&[("a", 2), ("b", 4)]);
        for (text, says) in [
            ("{maximal device=0}", "'maximal"),
            ("{manual}", "'manual'"),
            ("{{replicated}, {replicated}}", "tuple"),
            ("{devices=[2,2]<=[4]}", "names 4 devices and the mesh has 8"),
            ("{devices=[8,1]0,0,1,2,3,4,5,6}", "listed twice"),
            // Dim 1's tile alternates with b's low bit: no axis of { a = 2, b = 4 } does that.
            ("{devices=[4,2]0,2,1,3,4,5,6,7}", "no assignment"),
        ] {
            let error = HloSharding::parse(text)
                .and_then(|sharding| sharding.axes(&ab))
                .expect_err(text);
            assert!(error.contains(says), "{text}: {error}");
        }
    }
}
