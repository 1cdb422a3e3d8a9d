//! `starling eval`: evaluate expressions against optional MY and TARGET ads,
//! printing each value on its own line in ClassAd syntax.

use std::io::{BufRead, Write};
use std::process::ExitCode;

use starling_protocol::classad::{parse_expr, unparse_value, Evaluator, Mode};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The MY ad: a file, or ad text in any format (`[ a = 1 ]`).
    #[arg(long, value_name = "FILE|AD")]
    my: Option<String>,
    /// The TARGET ad: a file, or ad text in any format.
    #[arg(long, value_name = "FILE|AD")]
    target: Option<String>,
    /// Read one expression per line from standard input.
    #[arg(long)]
    stdin: bool,
    /// Resolve unqualified names in MY only (HTCondor's library default)
    /// instead of MY then TARGET (HTCondor's daemons).
    #[arg(long)]
    strict: bool,
    /// Expressions to evaluate.
    #[arg(value_name = "EXPR", allow_hyphen_values = true)]
    exprs: Vec<String>,
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let my = args
        .my
        .as_deref()
        .map(|a| super::read_ad_arg(a, "--my"))
        .transpose()?;
    let target = args
        .target
        .as_deref()
        .map(|a| super::read_ad_arg(a, "--target"))
        .transpose()?;
    anyhow::ensure!(
        args.stdin || !args.exprs.is_empty(),
        "nothing to evaluate: give expressions as arguments or --stdin"
    );
    let mode = if args.strict {
        Mode::Strict
    } else {
        Mode::Compat
    };
    let mut ev = Evaluator::with_ads(my.as_ref(), target.as_ref()).mode(mode);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut failures = 0usize;
    let mut eval_line = |text: &str, out: &mut dyn Write, n: usize| -> std::io::Result<()> {
        match parse_expr(text) {
            Ok(e) => writeln!(out, "{}", unparse_value(&ev.eval(&e))),
            Err(err) => {
                failures += 1;
                eprintln!("starling eval: expression {n}: {err}");
                writeln!(out, "error")
            }
        }
    };
    for (i, e) in args.exprs.iter().enumerate() {
        eval_line(e, &mut out, i + 1)?;
    }
    if args.stdin {
        let stdin = std::io::stdin();
        let mut line = String::new();
        let mut reader = stdin.lock();
        let mut n = 0;
        loop {
            line.clear();
            if reader.read_line(&mut line)? == 0 {
                break;
            }
            n += 1;
            eval_line(line.trim_end_matches(['\n', '\r']), &mut out, n)?;
        }
    }
    out.flush()?;
    Ok(if failures > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
