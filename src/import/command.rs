//! Command lines as logs show them: the prompt dropped, the benchmark
//! binary found, and the rank count the launcher's arguments give.

/// Launchers whose command lines say how many ranks ran.
const LAUNCHERS: [&str; 6] = ["mpirun", "mpiexec", "srun", "orterun", "prterun", "flux"];

/// A command line as a log shows it.
pub(crate) struct CommandLine<'a> {
    /// From the launcher or the benchmark binary on, with any `NAME=value`
    /// settings just before it; a shell prompt, `$`, `Running:` or `time`
    /// in front is dropped.
    pub tokens: Vec<&'a str>,
    /// Where the benchmark binary is in `tokens`, when the line names it.
    pub binary: Option<usize>,
    /// The rank count the launcher's arguments give.
    pub ranks: Option<u32>,
}

impl CommandLine<'_> {
    pub fn text(&self) -> String {
        self.tokens.join(" ")
    }

    /// The benchmark binary's own arguments.
    pub fn args(&self) -> &[&str] {
        self.binary.map_or(&[], |b| &self.tokens[b + 1..])
    }
}

/// The command line `line` holds, if it runs a launcher or a binary for
/// which `is_binary` holds. Comment lines (`#`) are never commands.
pub(crate) fn command_line(line: &str, is_binary: impl Fn(&str) -> bool) -> Option<CommandLine<'_>> {
    if line.trim_start().starts_with('#') {
        return None;
    }
    let all: Vec<&str> = line.split_whitespace().collect();
    let is_launcher = |t: &str| LAUNCHERS.contains(&t.rsplit('/').next().unwrap_or(t));
    let is_setting = |t: &str| {
        t.split_once('=').is_some_and(|(k, _)| {
            !k.is_empty() && k.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        })
    };
    let first = all.iter().position(|t| is_launcher(t) || is_binary(t))?;
    let start = (0..first).rev().take_while(|&i| is_setting(all[i])).last().unwrap_or(first);
    let tokens = all[start..].to_vec();
    let binary = tokens.iter().position(|t| is_binary(t));
    let launcher = tokens.iter().position(|t| is_launcher(t)).filter(|l| binary.is_none_or(|b| *l < b));
    let ranks = launcher.and_then(|l| launcher_ranks(&tokens[l + 1..binary.unwrap_or(tokens.len())]));
    Some(CommandLine { tokens, binary, ranks })
}

/// The rank count a launcher's arguments give: `-np N`, `-n N`, `--np N`,
/// `--ntasks N` or `--ntasks=N`, else `-N nodes` × `--ntasks-per-node`
/// (srun) or `--tasks-per-node` (srun, flux).
/// `tokens` must stop before the benchmark binary, whose own `-n` means
/// something else.
pub(crate) fn launcher_ranks(tokens: &[&str]) -> Option<u32> {
    // `-n 8`, `--ntasks=8`, and srun's attached short form `-N2`.
    let value = |keys: &[&str]| -> Option<u32> {
        tokens.iter().enumerate().find_map(|(i, t)| {
            keys.iter().find_map(|k| {
                let rest = t.strip_prefix(k)?;
                let attached =
                    if k.starts_with("--") && !rest.is_empty() { rest.strip_prefix('=') } else { Some(rest) };
                match attached {
                    Some("") => tokens.get(i + 1)?.parse().ok(),
                    Some(v) => v.parse().ok(),
                    None => None,
                }
            })
        })
    };
    value(&["-np", "--np", "--ntasks", "-n"]).or_else(|| {
        let nodes = value(&["--nodes", "-N"])?;
        nodes.checked_mul(value(&["--ntasks-per-node", "--tasks-per-node"])?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launcher_rank_counts() {
        let toks = |s: &'static str| s.split_whitespace().collect::<Vec<_>>();
        assert_eq!(launcher_ranks(&toks("mpirun -np 16 -H a:8,b:8")), Some(16));
        assert_eq!(launcher_ranks(&toks("srun --ntasks=32 --mpi=pmix")), Some(32));
        assert_eq!(launcher_ranks(&toks("srun -N2 --ntasks-per-node=4 --mpi=pmix")), Some(8));
        assert_eq!(launcher_ranks(&toks("srun -N 2 --ntasks-per-node 4")), Some(8));
        assert_eq!(launcher_ranks(&toks("srun -N2 --mpi=pmix")), None);
        assert_eq!(launcher_ranks(&toks("mpirun --np 4")), Some(4));
        assert_eq!(launcher_ranks(&toks("run -N4 --tasks-per-node=96 -o cpu-affinity=per-task")), Some(384));
    }

    #[test]
    fn command_lines_lose_their_prompt_and_keep_their_settings() {
        let osu = |t: &str| t.rsplit('/').next().is_some_and(|b| b.starts_with("osu_"));
        let c = command_line("[root@h workspace]#  mpirun -np 16 ./osu_bw D D", osu).unwrap();
        assert_eq!((c.text().as_str(), c.binary, c.ranks), ("mpirun -np 16 ./osu_bw D D", Some(3), Some(16)));
        assert_eq!(c.args(), ["D", "D"]);
        let c = command_line("Running: CUDA_VISIBLE_DEVICES=1,2 ./osu_bw -n 5", osu).unwrap();
        assert_eq!((c.text().as_str(), c.ranks), ("CUDA_VISIBLE_DEVICES=1,2 ./osu_bw -n 5", None));
        assert_eq!(command_line("time flux run -N4 --tasks-per-node=96 osu_allreduce", osu).unwrap().ranks, Some(384));
        assert!(command_line("# Collective test starting: osu_bw", osu).is_none());
        assert!(command_line("nothing to run here", osu).is_none());
    }
}
