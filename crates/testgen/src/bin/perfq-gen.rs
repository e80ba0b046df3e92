//! `perfq-gen`: writes a synthetic top-down capture of a real program.
//!
//! ```text
//! cargo run -p perfq-testgen --release --bin perfq-gen -- \
//!     --preset sapphirerapids --samples 10000000 --binary testdata/td-demo \
//!     --depth 12 -o /tmp/big.data
//! ```

use std::process::ExitCode;
use std::time::Instant;

use perfq_testgen::{presets, AttrSize, Binary, CallTree, Workload, Writer};

const USAGE: &str = "\
usage: perfq-gen --preset NAME -o FILE [options]

  --preset NAME      machine and events (--list shows them)
  -o, --output FILE  the capture to write
  --samples N        samples to write (default 10000)
  --binary PATH      the ELF program sampled (default testdata/td-demo)
  --mapping PATH     the path written in MMAP2 (default: --binary as given)
  --depth N          random call paths of depth 2N/3..=5N/3 through the
                     program's functions (default: the demo's own call tree)
  --paths N          number of random call paths with --depth (default 200)
  --threads N        threads of the process (default 4)
  --seed N           seed of every random choice (default 1)
  --noise F          relative jitter of each sample's mix (default 0.1)
  --attr-size N      128 (perf 5.13-6.2; default, perf 6.1 reads it) or 136
  --list             print the preset names";

struct Args {
    preset: String,
    output: String,
    samples: u64,
    binary: String,
    mapping: Option<String>,
    depth: Option<usize>,
    paths: usize,
    threads: u32,
    seed: u64,
    noise: f64,
    attr_size: AttrSize,
}

fn parse() -> Result<Option<Args>, String> {
    let mut a = Args {
        preset: String::new(),
        output: String::new(),
        samples: 10_000,
        binary: "testdata/td-demo".into(),
        mapping: None,
        depth: None,
        paths: 200,
        threads: 4,
        seed: 1,
        noise: 0.1,
        attr_size: AttrSize::Ver7,
    };
    let mut it = std::env::args().skip(1);
    fn num<T: std::str::FromStr>(flag: &str, v: Option<String>) -> Result<T, String> {
        let v = v.ok_or_else(|| format!("{flag} needs a value"))?;
        v.parse().map_err(|_| format!("{flag}: not a number: {v}"))
    }
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--preset" => a.preset = it.next().ok_or("--preset needs a value")?,
            "-o" | "--output" => a.output = it.next().ok_or("-o needs a value")?,
            "--samples" => a.samples = num(&flag, it.next())?,
            "--binary" => a.binary = it.next().ok_or("--binary needs a value")?,
            "--mapping" => a.mapping = Some(it.next().ok_or("--mapping needs a value")?),
            "--depth" => a.depth = Some(num(&flag, it.next())?),
            "--paths" => a.paths = num(&flag, it.next())?,
            "--threads" => a.threads = num(&flag, it.next())?,
            "--seed" => a.seed = num(&flag, it.next())?,
            "--noise" => a.noise = num(&flag, it.next())?,
            "--attr-size" => {
                a.attr_size = match num::<u32>(&flag, it.next())? {
                    128 => AttrSize::Ver7,
                    136 => AttrSize::Ver8,
                    n => return Err(format!("--attr-size: 128 or 136, not {n}")),
                }
            }
            "--list" => {
                for n in presets::NAMES {
                    println!("{n}");
                }
                return Ok(None);
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(None);
            }
            _ => return Err(format!("unknown argument {flag}")),
        }
    }
    if a.preset.is_empty() || a.output.is_empty() {
        return Err("--preset and -o are required".into());
    }
    Ok(Some(a))
}

fn run(a: &Args) -> std::io::Result<()> {
    let invalid = |m: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, m);
    let mut preset = presets::get(&a.preset).ok_or_else(|| {
        invalid(format!(
            "unknown preset {}; known: {}",
            a.preset,
            presets::NAMES.join(", ")
        ))
    })?;
    preset.spec.attr_size = a.attr_size;
    let binary = Binary::open(&a.binary)?;
    let tree = match a.depth {
        Some(d) => {
            let names: Vec<String> = binary
                .functions()
                .iter()
                .map(|f| f.name.clone())
                // The C runtime's own functions never run the workload.
                .filter(|n| !n.starts_with('_') && !n.ends_with("_tm_clones") && n != "frame_dummy")
                .collect();
            CallTree::random(&names, (2 * d / 3, 5 * d / 3), a.paths, a.seed)
        }
        None => CallTree::td_demo(),
    };
    let mut w = Workload::new(&binary, a.mapping.as_deref().unwrap_or(&a.binary));
    w.threads = a.threads;
    w.seed = a.seed;
    w.noise = a.noise;
    let started = Instant::now();
    let mut writer = Writer::create(&a.output, &w.spec(&preset))?;
    w.run(&preset, &tree, a.samples, &mut writer, |_| {})?;
    let s = writer.finish()?;
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "{}: {} samples, {} records, {} bytes in {:.2} s ({:.2} M samples/s)",
        a.output,
        s.samples,
        s.records,
        s.file_size,
        secs,
        s.samples as f64 / secs.max(1e-9) / 1e6
    );
    Ok(())
}

fn main() -> ExitCode {
    match parse() {
        Ok(None) => ExitCode::SUCCESS,
        Ok(Some(a)) => match run(&a) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("perfq-gen: {e}");
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            eprintln!("perfq-gen: {e}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}
