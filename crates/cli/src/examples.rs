//! The examples every `--help` ends with. Each line's `perfq ...` command
//! is parsed by the tests below, so an example cannot name an option that
//! no longer exists; `tests/help.rs` keeps the whole help text as a
//! snapshot.

pub const PERFQ: &str = "\
Quick start:
  perf record -g -- ./app                # record your program (frame-pointer call graphs)
  perfq report perf.data                 # the busiest functions, as perf report shows them
  perfq html perf.data -o report.html    # one page: time line, functions, callers, flame graph
  perfq record -- ./app                  # top-down per function (a machine with a hardware PMU)

Each command's --help has examples; docs/ has the rest.";

pub const INFO: &str = "\
Examples:
  perfq info perf.data                           # header, events, record counts, losses
  perfq info perf.data --format json             # the same as one JSON object
  perf record -o - -- ./app | perfq info -       # a capture read from a pipe";

pub const DUMP: &str = "\
Examples:
  perfq dump perf.data | head                    # each sample as one JSON line
  perfq dump perf.data --symbols                 # with each frame's function and file:line
  perfq dump perf.data --format csv > samples.csv
  perfq dump perf.data --records all             # the sideband records (mmap, comm, ...) too";

pub const CONVERT: &str = "\
Examples:
  perfq convert perf.data -o dataset             # dataset/capture=<id>/*.parquet
  perfq convert a.data b.data -o dataset --no-symbols
  perfq convert long.data -o dataset --stack-memory 256M";

pub const REPORT: &str = "\
Examples:
  perfq report perf.data                         # self samples per function, like perf report --stdio
  perfq report perf.data --children              # and total (inclusive) time
  perfq report perf.data --sort dso --pid 4242 --format csv
  perfq report perf.data --archive perf.data.tar.bz2   # binaries from the machine that recorded
  perfq report sched.data --off-cpu --children   # where threads waited, in ms (docs/off-cpu.md)";

pub const TOPDOWN: &str = "\
Examples:
  perfq topdown perf.data                        # level-1 shares of each function's slots
  perfq topdown perf.data --level 2 --total      # level 2, each function with its callees
  perfq topdown perf.data --by thread --interval 100
  perfq topdown dataset --format json";

pub const RECORD: &str = "\
Examples:
  perfq record --print                           # what this machine can record, and why
  perfq record -g -- ./app --input big.txt       # top-down per function of ./app
  perfq record -a --duration 10 --level 2 -o td.data
  perfq record --events '{task-clock,page-faults}:S' -- ./app   # without a hardware PMU
  perfq record --off-cpu -g -- ./app            # and where its threads wait";

pub const QUERY: &str = "\
Examples:
  perfq query perf.data \"SELECT symbol, samples FROM function_self ORDER BY samples DESC LIMIT 10\"
  perfq query dataset \"SELECT tid, COUNT(*) AS n FROM samples GROUP BY tid\" --format csv
  perfq query perf.data \"SELECT * FROM frames\" --format parquet -o frames.parquet
  perfq query s3://perf-archive/dataset \"SELECT capture, COUNT(*) FROM samples GROUP BY 1\"";

pub const FLAMEGRAPH: &str = "\
Examples:
  perfq flamegraph perf.data -o flame.svg        # open it in a browser: click to zoom
  perfq flamegraph perf.data --folded > out.folded   # as stackcollapse-perf.pl folds them
  perfq flamegraph perf.data --color topdown -o topdown.svg";

pub const DIFF: &str = "\
Examples:
  perfq diff before.data after.data              # the functions whose share changed most
  perfq diff before.data after.data --by dso
  perfq diff before.data after.data --format csv -o change.csv";

pub const EXPORT: &str = "\
Examples:
  perfq export perf.data --to pprof -o profile.pb.gz   # go tool pprof -top profile.pb.gz
  perfq export perf.data --to speedscope -o profile.json";

pub const HTML: &str = "\
Examples:
  perfq html perf.data -o report.html
  perfq html after.data --diff before.data -o change.html
  perfq html dataset --capture 9f86d081884c7d65 -o report.html";

pub const BATCH: &str = "\
Examples:
  perfq batch captures/ -o dataset               # every perf.data under captures/
  perfq batch 'runs/*.data' nightly.tar.zst -o dataset -j 4
  perfq batch s3://perf-archive/captures/ -o s3://perf-archive/dataset";

pub const CACHE: &str = "\
Examples:
  perfq cache list
  perfq cache prune --max 20G
  perfq cache clear";

pub const COMPLETIONS: &str = "\
Examples:
  perfq completions bash > ~/.local/share/bash-completion/completions/perfq
  perfq completions zsh > ~/.zfunc/_perfq        # with fpath+=(~/.zfunc) in ~/.zshrc
  perfq completions fish > ~/.config/fish/completions/perfq.fish";

pub const MAN: &str = "\
Examples:
  perfq man | man -l -                           # read perfq(1)
  perfq man report | man -l -                    # read perfq-report(1)
  perfq man --dir /usr/local/share/man/man1      # every page, for man perfq-topdown";

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use crate::cli::Cli;

    /// The `perfq ...` commands of an example text: the part of each line
    /// from `perfq` to a comment, pipe or redirection.
    fn commands(text: &str) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        for line in text.lines() {
            let Some(start) = line.find("perfq ") else {
                continue;
            };
            let words = split(&line[start..]);
            let end = words
                .iter()
                .position(|w| ["#", "|", ">", "&&"].contains(&w.as_str()))
                .unwrap_or(words.len());
            out.push(words[..end].to_vec());
        }
        out
    }

    /// Words as a POSIX shell splits them, for the quoting examples use
    /// (single and double quotes, no escapes).
    fn split(line: &str) -> Vec<String> {
        let mut words = Vec::new();
        let mut word: Option<String> = None;
        let mut quote: Option<char> = None;
        for c in line.chars() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), c) => word.get_or_insert_with(String::new).push(c),
                (None, '\'' | '"') => {
                    quote = Some(c);
                    word.get_or_insert_with(String::new);
                }
                (None, c) if c.is_whitespace() => words.extend(word.take()),
                (None, c) => word.get_or_insert_with(String::new).push(c),
            }
        }
        words.extend(word);
        words
    }

    #[test]
    fn every_example_parses() {
        let mut texts = vec![super::PERFQ.to_string()];
        let cli = Cli::command();
        for sub in cli.get_subcommands() {
            let help = sub
                .get_after_help()
                .unwrap_or_else(|| panic!("perfq {} has no examples", sub.get_name()));
            texts.push(help.to_string());
        }
        let mut parsed = 0;
        for text in &texts {
            for argv in commands(text) {
                if let Err(e) = Cli::try_parse_from(&argv) {
                    panic!("{argv:?} does not parse:\n{e}");
                }
                parsed += 1;
            }
        }
        assert!(parsed >= 40, "only {parsed} examples");
    }

    #[test]
    fn examples_show_the_command_they_belong_to() {
        for sub in Cli::command().get_subcommands() {
            let name = sub.get_name();
            let help = sub
                .get_after_help()
                .map(|h| h.to_string())
                .unwrap_or_default();
            let of_it = commands(&help)
                .iter()
                .filter(|argv| argv.get(1).map(String::as_str) == Some(name))
                .count();
            assert!(of_it >= 2, "perfq {name}: {of_it} examples of itself");
        }
    }

    #[test]
    fn quoting_is_split_as_a_shell_splits_it() {
        assert_eq!(
            split(r#"perfq query x "SELECT 'a b'" --events '{a,b}:S'"#),
            ["perfq", "query", "x", "SELECT 'a b'", "--events", "{a,b}:S"]
        );
    }
}
