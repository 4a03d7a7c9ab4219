//! `ycsb shell <db>`: Java YCSB's command-line client (`bin/ycsb shell`,
//! `site.ycsb.CommandLine`, also go-ycsb's `shell`) on any store: one
//! command per line of standard input, answered in Java's words.
//!
//! Input can be piped (`printf 'insert k f=v\nread k\n' | ycsb shell
//! memory`), which is how the tests drive it. Where Java's client breaks,
//! this one says why instead: `table <name>` really switches the table
//! (Java's assigns a local copy and keeps the old one), a scan length that
//! is not a number or a value without `=` is an error line rather than an
//! uncaught exception, and the end of the input ends the shell as `quit`
//! does (Java's throws on it).

use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use ycsb_core::Session;
use ycsb_db::{Fields, ReadOp, Record, ScanOp, ScanResult, Store, StoreThread, ThreadContext};

use crate::args::Shell;
use crate::{build_properties_quietly, find_store, print_unknown, print_warnings, Failure};

/// Java's `CommandLine.help()`, with `table` as it works here.
pub(crate) const HELP: &str = "\
Commands:
  read key [field1 field2 ...] - Read a record
  scan key recordcount [field1 field2 ...] - Scan starting at key
  insert key name1=value1 [name2=value2 ...] - Insert a new record
  update key name1=value1 [name2=value2 ...] - Update a record
  delete key - Delete a record
  table [tablename] - Get or [set] the name of the table
  quit - Quit
";

/// The line between the records of a scan's answer.
const SEPARATOR: &str = "--------------------------------";

/// Runs the shell until `quit` or the end of standard input.
pub fn run(shell: Shell) -> Result<u8, Failure> {
    let (props, warnings) = build_properties_quietly(&shell.sources)?;
    let descriptor = find_store(&shell.db)?;
    let session = Session::new(props, descriptor).map_err(Failure::usage)?;
    let output: ycsb_db::OutputSink = Arc::new(Mutex::new(std::io::stdout()));
    let store = session.open_store(Some(output)).map_err(Failure::usage)?;
    // Warnings only once the input is good: a bad input is one line.
    print_warnings(&warnings);
    print_unknown(&session.unknown_properties());
    let table = session.benchmark().workload().table().to_string();
    let stdin = std::io::stdin();
    let result = serve(
        store.as_ref(),
        table,
        &mut stdin.lock(),
        &mut std::io::stdout(),
    );
    let closed = store.close();
    result.map_err(|e| Failure::runtime(format!("ycsb shell: {e}")))?;
    closed.map_err(|e| Failure::runtime(format!("closing the store: {e}")))?;
    Ok(0)
}

/// Answers the commands of `input` on `store`, in Java's words, on `out`.
///
/// # Errors
///
/// A store thread that cannot be opened or finished, or output that
/// cannot be written, as a message.
fn serve(
    store: &dyn Store,
    table: String,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Result<(), String> {
    let io = |e: std::io::Error| format!("writing to standard output: {e}");
    writeln!(
        out,
        "YCSB Command Line client\nType \"help\" for command line help\nStart with \"-help\" for usage info"
    )
    .map_err(io)?;
    let mut db = store
        .thread(ThreadContext::new(0, 1))
        .map_err(|e| format!("opening a store thread: {e}"))?;
    writeln!(out, "Connected.").map_err(io)?;
    let mut shell = Commands {
        db: &mut *db,
        table,
        record: Record::new(),
        scan: ScanResult::new(),
    };
    let mut line = String::new();
    loop {
        write!(out, "> ").map_err(io)?;
        out.flush().map_err(io)?;
        line.clear();
        let read = input
            .read_line(&mut line)
            .map_err(|e| format!("reading standard input: {e}"))?;
        if read == 0 {
            // The end of the input: the prompt gets its line end.
            writeln!(out).map_err(io)?;
            break;
        }
        let command = line.trim_end_matches(['\n', '\r']);
        match command.trim() {
            "" => continue,
            "help" => {
                write!(out, "{HELP}").map_err(io)?;
                continue;
            }
            "quit" => break,
            _ => {}
        }
        let start = Instant::now();
        let tokens: Vec<&str> = command.split_whitespace().collect();
        shell.execute(&tokens, out).map_err(io)?;
        writeln!(out, "{} ms", start.elapsed().as_millis()).map_err(io)?;
    }
    db.cleanup()
        .map_err(|e| format!("finishing the store thread: {e}"))?;
    Ok(())
}

/// The shell's state: its store thread, the current table and reusable
/// buffers.
struct Commands<'a> {
    db: &'a mut dyn StoreThread,
    table: String,
    record: Record,
    scan: ScanResult,
}

impl Commands<'_> {
    fn execute(&mut self, tokens: &[&str], out: &mut dyn Write) -> std::io::Result<()> {
        match tokens[0] {
            "table" => self.table_command(tokens, out),
            "read" => self.read(tokens, out),
            "scan" => self.scan(tokens, out),
            "update" | "insert" => self.write(tokens, out),
            "delete" => self.delete(tokens, out),
            other => writeln!(out, "Error: unknown command \"{other}\""),
        }
    }

    fn table_command(&mut self, tokens: &[&str], out: &mut dyn Write) -> std::io::Result<()> {
        match tokens {
            [_] => {}
            [_, name] => self.table = name.to_string(),
            _ => return writeln!(out, "Error: syntax is \"table tablename\""),
        }
        writeln!(out, "Using table \"{}\"", self.table)
    }

    fn read(&mut self, tokens: &[&str], out: &mut dyn Write) -> std::io::Result<()> {
        let [_, key, fields @ ..] = tokens else {
            return writeln!(out, "Error: syntax is \"read keyname [field1 field2 ...]\"");
        };
        let names: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
        self.record.clear();
        let status = self.db.read(
            &ReadOp {
                table: &self.table,
                key,
                fields: selection(&names),
            },
            &mut self.record,
        );
        writeln!(out, "Return code: {}", status.name())?;
        print_record(&self.record, out)
    }

    fn scan(&mut self, tokens: &[&str], out: &mut dyn Write) -> std::io::Result<()> {
        let [_, key, length, fields @ ..] = tokens else {
            return writeln!(
                out,
                "Error: syntax is \"scan keyname scanlength [field1 field2 ...]\""
            );
        };
        let Ok(length) = length.parse::<usize>() else {
            return writeln!(
                out,
                "Error: scanlength '{length}' is not a whole number of records"
            );
        };
        let names: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
        self.scan.clear();
        let status = self.db.scan(
            &ScanOp {
                table: &self.table,
                start_key: key,
                count: length,
                fields: selection(&names),
            },
            &mut self.scan,
        );
        writeln!(out, "Result: {}", status.name())?;
        if self.scan.is_empty() {
            return writeln!(out, "0 records");
        }
        writeln!(out, "{SEPARATOR}")?;
        for (index, (_, record)) in self.scan.iter().enumerate() {
            writeln!(out, "Record {index}")?;
            print_record(record, out)?;
            writeln!(out, "{SEPARATOR}")?;
        }
        Ok(())
    }

    /// `insert` and `update`: the same syntax, Java's `Result:` line.
    fn write(&mut self, tokens: &[&str], out: &mut dyn Write) -> std::io::Result<()> {
        let command = tokens[0];
        let [_, key, assignments @ ..] = tokens else {
            return syntax_of_write(command, out);
        };
        if assignments.is_empty() {
            return syntax_of_write(command, out);
        }
        // Java's `HashMap` of `token.split("=")`: the value is the text
        // between the first `=` and the next (`f=a=b` stores `a`), and a
        // name given twice keeps its last value.
        let mut fields: Vec<(&str, &str)> = Vec::with_capacity(assignments.len());
        for assignment in assignments {
            let Some((name, rest)) = assignment.split_once('=') else {
                return writeln!(out, "Error: '{assignment}' is not name=value");
            };
            let value = rest.split('=').next().unwrap_or_default();
            match fields.iter_mut().find(|(known, _)| *known == name) {
                Some(field) => field.1 = value,
                None => fields.push((name, value)),
            }
        }
        self.record.clear();
        for (name, value) in fields {
            self.record.push(name, value.as_bytes());
        }
        let status = if command == "insert" {
            self.db.insert(&self.table, key, &self.record)
        } else {
            self.db.update(&self.table, key, &self.record)
        };
        writeln!(out, "Result: {}", status.name())
    }

    fn delete(&mut self, tokens: &[&str], out: &mut dyn Write) -> std::io::Result<()> {
        let [_, key] = tokens else {
            return writeln!(out, "Error: syntax is \"delete keyname\"");
        };
        let status = self.db.delete(&self.table, key);
        writeln!(out, "Return result: {}", status.name())
    }
}

fn syntax_of_write(command: &str, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "Error: syntax is \"{command} keyname name1=value1 [name2=value2 ...]\""
    )
}

/// No names: every field (Java passes `null`).
fn selection(names: &[String]) -> Fields<'_> {
    if names.is_empty() {
        Fields::All
    } else {
        Fields::Only(names)
    }
}

/// Java prints each field as `name=value`.
fn print_record(record: &Record, out: &mut dyn Write) -> std::io::Result<()> {
    for field in record.iter() {
        writeln!(
            out,
            "{}={}",
            field.name,
            String::from_utf8_lossy(field.value)
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(input: &str) -> String {
        let descriptor = ycsb_stores::find("memory").unwrap();
        let props = ycsb_db::Properties::new();
        let store = (descriptor.open)(&ycsb_db::StoreContext::new(&props)).unwrap();
        let mut out = Vec::new();
        serve(
            store.as_ref(),
            "usertable".into(),
            &mut input.as_bytes(),
            &mut out,
        )
        .unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn answers_in_java_s_words() {
        let out = session(
            "insert user1 field0=a field1=b\nread user1\nread user1 field1\nupdate user1 field0=z\nread user9\nscan user1 5\nscan zzz 5\ndelete user1\ndelete user1\n",
        );
        let lines: Vec<&str> = out
            .lines()
            .map(|l| l.trim_start_matches("> "))
            .filter(|l| !l.ends_with(" ms"))
            .collect();
        assert_eq!(
            lines[..4],
            [
                "YCSB Command Line client",
                "Type \"help\" for command line help",
                "Start with \"-help\" for usage info",
                "Connected."
            ]
        );
        assert_eq!(
            lines[4..],
            [
                "Result: OK",
                "Return code: OK",
                "field0=a",
                "field1=b",
                "Return code: OK",
                "field1=b",
                "Result: OK",
                "Return code: NOT_FOUND",
                "Result: OK",
                SEPARATOR,
                "Record 0",
                "field0=z",
                "field1=b",
                SEPARATOR,
                "Result: OK",
                "0 records",
                "Return result: OK",
                "Return result: NOT_FOUND",
                "",
            ]
        );
        // Java's timing line after every command.
        assert_eq!(out.lines().filter(|l| l.ends_with(" ms")).count(), 9);
    }

    #[test]
    fn assignments_store_what_java_s_split_stores() {
        let out = session(
            // Its own key: the memory store is shared by the tests.
            "insert split f=a=b g==c h=x h=y\nread split\nupdate split f=1=2=3\nread split f\n",
        );
        let lines: Vec<&str> = out
            .lines()
            .map(|l| l.trim_start_matches("> "))
            .filter(|l| !l.ends_with(" ms"))
            .skip(4)
            .collect();
        assert_eq!(
            lines,
            [
                "Result: OK",
                "Return code: OK",
                "f=a",
                "g=",
                "h=y",
                "Result: OK",
                "Return code: OK",
                "f=1",
                "",
            ]
        );
    }

    #[test]
    fn tables_errors_help_and_quit() {
        let out = session(
            "table\ntable other\ninsert k f=v\ntable usertable\nread k\nread\nscan k\nscan k many\ninsert k\ninsert k novalue\ndelete\ntable a b\nfrob\nhelp\n\nquit\nread k\n",
        );
        for expected in [
            "Using table \"usertable\"",
            "Using table \"other\"",
            "Return code: NOT_FOUND",
            "Error: syntax is \"read keyname [field1 field2 ...]\"",
            "Error: syntax is \"scan keyname scanlength [field1 field2 ...]\"",
            "Error: scanlength 'many' is not a whole number of records",
            "Error: syntax is \"insert keyname name1=value1 [name2=value2 ...]\"",
            "Error: 'novalue' is not name=value",
            "Error: syntax is \"delete keyname\"",
            "Error: syntax is \"table tablename\"",
            "Error: unknown command \"frob\"",
            "  table [tablename] - Get or [set] the name of the table",
        ] {
            assert!(out.contains(expected), "{expected}: {out}");
        }
        // `quit` ends the session: the read after it never runs.
        assert_eq!(out.matches("Return code:").count(), 1, "{out}");
    }
}
