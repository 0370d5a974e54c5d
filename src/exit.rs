//! The exit status of every command: one vocabulary, one meaning per code.
//!
//! Every command's `run` returns an [`Exit`]; `main` turns it into the process status. The
//! table [`Exit::ALL`] is the one place the codes are defined: `turnbench --help` prints it
//! ([`help`]), and docs/commands/exit-codes.md shows the same table (a test holds the two
//! together).

/// How a command ended. Codes are stable: scripts and CI gates read them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Exit {
    /// Done: everything asked for was done (failed checks, simulated faults of the
    /// built-in run and a dry run's plan are results, not failures).
    Success,
    /// An error: a definition, usage or setup problem, an unreadable input, or `lint`
    /// found problems or nothing to check; the message names the file, line and fix.
    Error,
    /// Finished, but some items failed: conversations or passes that failed (stored with
    /// their class), judgments stored unscored, records an import skipped.
    SomeFailed,
    /// A judge prompt would name a provider, model or vendor: nothing was sent.
    Leak,
    /// The store refused a write and the command stopped; everything stored before is
    /// kept, and running it again (`--resume`) finishes it.
    StoreRefused,
    /// `judge --anchors`: a judge could not rank the references above their spoiled
    /// variants; its scores are not evidence.
    AnchorsFailed,
    /// `report --fail-on-regression`: a comparison with the baseline is an established
    /// regression (the report is written first).
    Regression,
    /// `report --require-trusted-judge`: a judge whose scores the report shows is flagged
    /// or failed by its judge card (the report is written first).
    UntrustedJudge,
    /// Interrupted by Ctrl-C; what finished is stored, and the same command finishes it.
    Interrupted,
}

/// One row of the vocabulary: the code, its name, the commands that return it, its meaning.
pub struct ExitRow {
    pub exit: Exit,
    pub name: &'static str,
    pub commands: &'static str,
    pub meaning: &'static str,
}

impl Exit {
    /// Every code, in order, with the commands that return it and what it means.
    pub const ALL: [ExitRow; 9] = [
        ExitRow {
            exit: Exit::Success,
            name: "success",
            commands: "every command",
            meaning: "done (failed checks and the built-in run's simulated faults are results)",
        },
        ExitRow {
            exit: Exit::Error,
            name: "error",
            commands: "every command",
            meaning: "a definition, usage or setup error, or an unreadable input; lint: problems found, or nothing to check",
        },
        ExitRow {
            exit: Exit::SomeFailed,
            name: "some-failed",
            commands: "collect, replay, judge, import, label import, run",
            meaning: "finished, but some items failed: conversations, passes, unscored judgments, skipped records or labels",
        },
        ExitRow {
            exit: Exit::Leak,
            name: "leak",
            commands: "judge, run",
            meaning: "a judge prompt would name a provider, model or vendor; nothing was sent",
        },
        ExitRow {
            exit: Exit::StoreRefused,
            name: "store-refused",
            commands: "collect, replay, judge, run",
            meaning: "the store refused a write and the command stopped; running it again finishes it",
        },
        ExitRow {
            exit: Exit::AnchorsFailed,
            name: "anchors-failed",
            commands: "judge --anchors",
            meaning: "a judge failed its reference anchors; its scores are not evidence",
        },
        ExitRow {
            exit: Exit::Regression,
            name: "regression",
            commands: "report --fail-on-regression",
            meaning: "a comparison with the baseline is an established regression",
        },
        ExitRow {
            exit: Exit::UntrustedJudge,
            name: "untrusted-judge",
            commands: "report --require-trusted-judge",
            meaning: "a judge whose scores the report shows is not trusted by its judge card",
        },
        ExitRow {
            exit: Exit::Interrupted,
            name: "interrupted",
            commands: "collect, replay, judge, run",
            meaning: "Ctrl-C; what finished is stored, and the same command finishes it",
        },
    ];

    /// The process exit status.
    pub fn code(self) -> i32 {
        match self {
            Exit::Success => 0,
            Exit::Error => 1,
            Exit::SomeFailed => 2,
            Exit::Leak => 3,
            Exit::StoreRefused => 4,
            Exit::AnchorsFailed => 5,
            Exit::Regression => 6,
            Exit::UntrustedJudge => 7,
            Exit::Interrupted => 130,
        }
    }

    /// `SomeFailed` when `failed`, else `Success`.
    pub fn failed_if(failed: bool) -> Exit {
        if failed {
            Exit::SomeFailed
        } else {
            Exit::Success
        }
    }
}

/// The table `turnbench --help` prints after the commands.
pub fn help() -> String {
    let mut out = String::from("Exit status (docs/commands/exit-codes.md):\n");
    for r in &Exit::ALL {
        out.push_str(&format!(
            "  {:>3}  {:<15} {} ({})\n",
            r.exit.code(),
            r.name,
            r.meaning,
            r.commands
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_one_exit_in_order() {
        for (i, r) in Exit::ALL.iter().enumerate() {
            assert!(
                Exit::ALL[..i]
                    .iter()
                    .all(|o| o.exit.code() < r.exit.code() && o.name != r.name),
                "{} twice or out of order",
                r.name
            );
        }
        // Interrupted is the last variant: every variant has its row.
        assert_eq!(Exit::ALL.len(), Exit::Interrupted as usize + 1);
        assert_eq!(Exit::Success.code(), 0);
        assert_eq!(Exit::Interrupted.code(), 130);
    }

    #[test]
    fn the_help_table_lists_every_code() {
        let help = help();
        for r in &Exit::ALL {
            assert!(
                help.contains(&format!("{:>3}  {}", r.exit.code(), r.name)),
                "{help}"
            );
        }
    }
}
