//! The `rsop` binary: parses arguments, runs the command, and turns the
//! result into an exit code (0 ok, 1 user error or failed check, 2 usage).

use std::io::Write;
use std::process::ExitCode;

use anstyle::{AnsiColor, Style};
use clap::Parser;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = match rsop::cli::Cli::try_parse() {
        Ok(cli) => cli,
        // clap prints help and version to stdout with code 0, and usage
        // errors to stderr with code 2.
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(e) => {
            report(&rsop::Error::io("read", "the current directory", e));
            return ExitCode::from(1);
        }
    };
    let mut stdout = anstream::stdout();
    match rsop::run(cli, &cwd, &mut stdout) {
        Ok(rsop::Outcome::Done) => ExitCode::SUCCESS,
        Ok(rsop::Outcome::Drift | rsop::Outcome::Incomplete) => ExitCode::from(1),
        Err(e) => {
            let _ = stdout.flush();
            report(&e);
            ExitCode::from(1)
        }
    }
}

/// Prints the error, its causes and its help line once, cargo style.
fn report(error: &rsop::Error) {
    let mut err = anstream::stderr();
    let red = Style::new().fg_color(Some(AnsiColor::Red.into())).bold();
    let cyan = Style::new().fg_color(Some(AnsiColor::Cyan.into())).bold();
    if let rsop::Error::Diagnostics(diagnostics) = error {
        for d in diagnostics {
            let _ = writeln!(err, "{red}error{red:#}: {}", d.message);
            let _ = writeln!(err, "  {cyan}-->{cyan:#} {}", d.location);
            if let Some(path) = &d.field_path {
                let _ = writeln!(err, "   = field: `{path}`");
            }
            if let Some(help) = &d.help {
                let _ = writeln!(err, "   = {cyan}help{cyan:#}: {help}");
            }
            let _ = writeln!(err);
        }
        let _ = writeln!(err, "{red}error{red:#}: {error}; nothing was written");
        return;
    }
    let _ = writeln!(err, "{red}error{red:#}: {error}");
    let mut source = std::error::Error::source(error);
    if source.is_some() {
        let _ = writeln!(err, "\ncaused by:");
    }
    while let Some(cause) = source {
        let _ = writeln!(err, "  {cause}");
        source = cause.source();
    }
    if let Some(help) = error.help() {
        let _ = writeln!(err, "\n{cyan}help{cyan:#}: {help}");
    }
}
