//! Reading and validating the CoreWorkload's settings.
//!
//! `CoreWorkload::from_properties` is a sequence of steps, each reading and
//! checking one group of properties. The steps run in a fixed order, and
//! the first invalid property stops the build, so that the error a user
//! sees for a file with several mistakes does not depend on how the code
//! is arranged.

use std::sync::Arc;
use std::time::Duration;

use ycsb_db::{Properties, PropertyDecl, PropertyError, RecordTemplate};

use super::datafile::{self, DataSet};
use super::properties::*;
use super::{ClientPartition, CoreWorkload, FieldLengthSpec, KeyOrder, KeySpec};
use super::{TransactionKind, WorkloadError};
use crate::clock::{Clock, CLOCK};
use crate::generator::{AcknowledgedCounter, HistogramGenerator};

impl CoreWorkload {
    /// Builds the workload from properties, validating every value.
    ///
    /// # Errors
    ///
    /// A [`WorkloadError`] naming the first invalid property, its value and
    /// where it came from.
    pub fn from_properties(props: &Properties) -> Result<Self, WorkloadError> {
        // A data file decides the record count and the fields.
        let data = DataSet::from_properties(props)?.map(Arc::new);
        let with_data;
        let props = match &data {
            Some(d) => {
                with_data = d.workload_properties(props);
                &with_data
            }
            None => props,
        };
        check_workload_class(props)?;
        let counts = Counts::from_properties(props)?;
        let field_names = field_names(props)?;
        let field_length = field_length(props)?;
        check_record_size(props, &field_names, &field_length)?;
        let data_integrity = data_integrity(props, &field_length)?;
        let mix = operation_mix(props)?;
        let clients = ClientPartition::from_properties(props)?;
        let (load_start, load_count) = counts.load_share(props, clients);
        let keys = key_spec(props, &counts)?;
        let empty_key_space = counts.empty_key_space(props, &mix);
        let (min_scan, max_scan) = scan_length_bounds(props)?;
        let (key_order, zero_padding) = key_naming(props)?;
        let field_names = data_file_fields(props, data.as_deref(), data_integrity, field_names)?;
        let workload = Self {
            table: props.get(&TABLE)?,
            record_template: match field_length {
                FieldLengthSpec::Constant(n) => Some(RecordTemplate::new(&field_names, n as usize)),
                _ => None,
            },
            field_names,
            field_length,
            read_all_fields: props.get(&READ_ALL_FIELDS)?,
            read_all_fields_by_name: props.get(&READ_ALL_FIELDS_BY_NAME)?,
            write_all_fields: props.get(&WRITE_ALL_FIELDS)?,
            data_integrity,
            mix,
            keys,
            // Java accepts minscanlength=0: a scan may then ask for no
            // record.
            scan_length: (min_scan, max_scan, props.get(&SCAN_LENGTH_DISTRIBUTION)?),
            key_order,
            zero_padding,
            record_count: counts.record_count,
            operation_count: counts.operation_count,
            load_start,
            load_count,
            load_until_stopped: counts.load_until_stopped && clients.count == 1,
            clients,
            retry_limit: props.get(&INSERTION_RETRY_LIMIT)?,
            retry_interval: Duration::from_secs(props.get(&INSERTION_RETRY_INTERVAL)?),
            keep_going_on_error: props.get(&INSERTION_KEEP_GOING_ON_ERROR)?,
            batch_size: props.get(&BATCH_SIZE)? as usize,
            inserts: Arc::new(AcknowledgedCounter::new(counts.record_count)),
            clock: Clock::new(props.get(&CLOCK)?),
            data,
            empty_key_space,
        };
        // Build one thread's generators now so that every parameter error
        // surfaces before any thread starts.
        workload.thread(0, 1, 0)?;
        Ok(workload)
    }
}

/// Refuses a `workload` class other than the CoreWorkload, under any of
/// the names Java's property files give it: a file meant for another
/// workload would otherwise run a different benchmark than it describes.
fn check_workload_class(props: &Properties) -> Result<(), PropertyError> {
    props.get_checked(&WORKLOAD_CLASS, |class| {
        if CORE_WORKLOAD_NAMES
            .iter()
            .any(|n| n.eq_ignore_ascii_case(class.trim()))
        {
            Ok(())
        } else {
            Err("only site.ycsb.workloads.CoreWorkload is implemented".into())
        }
    })?;
    Ok(())
}

/// The record and operation counts, the range of key numbers
/// (`insertstart`, `insertcount`) the run phase chooses keys in, and the
/// number of records the load phase inserts.
struct Counts {
    record_count: u64,
    operation_count: u64,
    insert_start: u64,
    /// `insertcount`, by default `recordcount - insertstart` (0 when
    /// `insertstart` is beyond `recordcount`): the run phase's key range.
    insert_count: u64,
    /// What the load phase inserts from `insertstart`: `insertcount` when
    /// set, else `recordcount`, as Java's `Client` does (so
    /// `recordcount=10, insertstart=5` loads key numbers 5..14 while the
    /// run phase chooses among 5..9, as in Java).
    load_count: u64,
    /// Java's load with `recordcount=0` and no `insertcount`: inserts
    /// until stopped (`load_count` is 0).
    load_until_stopped: bool,
}

/// The records Java's CoreWorkload assumes for `recordcount=0`
/// (`Integer.MAX_VALUE`): the run phase's key space, and where its
/// inserts start.
const JAVA_UNBOUNDED_RECORDS: u64 = i32::MAX as u64;

impl Counts {
    /// Reads the counts; an explicit insert range must lie within
    /// `recordcount` (Java's check `recordcount >= insertstart +
    /// insertcount`).
    ///
    /// `recordcount=0` is Java's: the data set is `Integer.MAX_VALUE`
    /// records for the run phase, and the load (unless `insertcount` says
    /// how many) inserts until stopped.
    fn from_properties(props: &Properties) -> Result<Self, PropertyError> {
        let raw_record_count = props.get(&RECORD_COUNT)?;
        let record_count = if raw_record_count == 0 {
            JAVA_UNBOUNDED_RECORDS
        } else {
            raw_record_count
        };
        let operation_count = props.get(&OPERATION_COUNT)?;
        let insert_start = props.get(&INSERT_START)?;
        let explicit_count = props.get_opt(&INSERT_COUNT)?;
        let insert_count =
            explicit_count.unwrap_or_else(|| record_count.saturating_sub(insert_start));
        if explicit_count.is_some()
            && insert_start
                .checked_add(insert_count)
                .is_none_or(|end| end > record_count)
        {
            return Err(props.invalid(
                INSERT_COUNT.decl(),
                format!(
                    "insertstart ({insert_start}) + insertcount ({insert_count}) exceeds recordcount ({record_count})"
                ),
            ));
        }
        // Java's Client loads `insertcount` records when set, else
        // `recordcount` as written (0: no limit).
        let load_count = explicit_count.unwrap_or(raw_record_count);
        let load_until_stopped = load_count == 0 && raw_record_count == 0;
        if insert_start.checked_add(load_count).is_none() {
            return Err(props.invalid(
                INSERT_START.decl(),
                format!("insertstart + recordcount ({record_count}) exceeds the key numbers"),
            ));
        }
        Ok(Self {
            record_count,
            operation_count,
            insert_start,
            insert_count,
            load_count,
            load_until_stopped,
        })
    }

    /// The first key number and count this client loads: its share of
    /// `recordcount` with several clients, unless `insertstart` or
    /// `insertcount` say explicitly what to load.
    fn load_share(&self, props: &Properties, clients: ClientPartition) -> (u64, u64) {
        if clients.count > 1
            && !props.is_set(INSERT_START.decl())
            && !props.is_set(INSERT_COUNT.decl())
        {
            clients.load_share(self.record_count)
        } else {
            (self.insert_start, self.load_count)
        }
    }

    /// The last key number the run phase may choose among the loaded
    /// records. With none, a run phase that chooses keys is refused
    /// ([`Counts::empty_key_space`]); the range is then never drawn from.
    fn last_key(&self) -> u64 {
        (self.insert_start + self.insert_count)
            .saturating_sub(1)
            .max(self.insert_start)
    }

    /// Why a run phase of `mix` cannot run: no loaded record to choose
    /// keys among, and operations that need one. The error names the
    /// count the user set: `insertcount`, `insertstart` or `recordcount`.
    fn empty_key_space(
        &self,
        props: &Properties,
        mix: &[(f64, TransactionKind)],
    ) -> Option<PropertyError> {
        if self.insert_count > 0 || mix.iter().all(|(_, k)| *k == TransactionKind::Insert) {
            return None;
        }
        let reason = "no loaded record lies in the run phase's key range, so its reads, updates, scans or deletes would only target keys never loaded; set recordcount (insertstart, insertcount) to the records loaded, or run inserts only (insertproportion=1, the other proportions 0)";
        let decl = if props.is_set(INSERT_COUNT.decl()) {
            INSERT_COUNT.decl()
        } else if props.is_set(INSERT_START.decl()) && self.record_count > 0 {
            INSERT_START.decl()
        } else {
            RECORD_COUNT.decl()
        };
        Some(props.invalid(decl, reason))
    }
}

/// The field names, `<fieldnameprefix>0` to `<fieldnameprefix><fieldcount-1>`.
/// A count whose names alone would exceed the record size is refused
/// before they are built.
fn field_names(props: &Properties) -> Result<Vec<String>, PropertyError> {
    let field_count = props.get_checked(&FIELD_COUNT, |c| {
        check_positive(c)?;
        if *c > MAX_FIELD_COUNT {
            return Err(format!("expected at most {MAX_FIELD_COUNT} fields"));
        }
        Ok(())
    })?;
    let prefix = props.get(&FIELD_NAME_PREFIX)?;
    Ok((0..field_count).map(|i| format!("{prefix}{i}")).collect())
}

/// The field length distribution; the histogram file is read here, once,
/// so that a bad file is reported before the phase starts.
fn field_length(props: &Properties) -> Result<FieldLengthSpec, WorkloadError> {
    let field_length = props.get(&FIELD_LENGTH)?;
    let min_field_length = props.get(&MIN_FIELD_LENGTH)?;
    let dist = props.get(&FIELD_LENGTH_DISTRIBUTION)?;
    if matches!(dist, FieldLengthDistribution::Constant) {
        // A constant length ignores minfieldlength, however it is set.
        return Ok(FieldLengthSpec::Constant(field_length));
    }
    if min_field_length > field_length {
        return Err(props
            .invalid(
                MIN_FIELD_LENGTH.decl(),
                format!("minfieldlength exceeds fieldlength ({field_length})"),
            )
            .into());
    }
    Ok(match dist {
        FieldLengthDistribution::Uniform => {
            FieldLengthSpec::Uniform(min_field_length, field_length)
        }
        FieldLengthDistribution::Zipfian => {
            FieldLengthSpec::Zipfian(min_field_length, field_length)
        }
        _ => {
            let path = props.get(&FIELD_LENGTH_HISTOGRAM)?;
            FieldLengthSpec::Histogram(HistogramGenerator::from_file(&path).map_err(|source| {
                WorkloadError::Generator {
                    property: "fieldlengthhistogram",
                    source,
                }
            })?)
        }
    })
}

/// The largest record the workload would write must stay within
/// [`MAX_RECORD_SIZE`]: every thread holds one (or two, to verify), and a
/// record of gigabytes would abort the process on allocation instead of
/// being refused here.
fn check_record_size(
    props: &Properties,
    field_names: &[String],
    field_length: &FieldLengthSpec,
) -> Result<(), PropertyError> {
    let (length_decl, longest) = match field_length {
        FieldLengthSpec::Constant(n)
        | FieldLengthSpec::Uniform(_, n)
        | FieldLengthSpec::Zipfian(_, n) => (FIELD_LENGTH.decl(), *n),
        FieldLengthSpec::Histogram(h) => (FIELD_LENGTH_HISTOGRAM.decl(), h.max_value()),
    };
    let too_large = || format!("above the maximum record size of {MAX_RECORD_SIZE} bytes (64 MiB)");
    if longest > MAX_RECORD_SIZE {
        return Err(props.invalid(
            length_decl,
            format!("a field of {longest} bytes is {}", too_large()),
        ));
    }
    let names: u64 = field_names.iter().map(|n| n.len() as u64).sum();
    let size = u128::from(longest) * field_names.len() as u128 + u128::from(names);
    if size > u128::from(MAX_RECORD_SIZE) {
        let show = |decl: &PropertyDecl| {
            props
                .raw(decl)
                .map(|r| format!("{}={} ({})", r.key, r.value, r.origin))
                .unwrap_or_default()
        };
        let message = format!(
            "records of {} fields of up to {} bytes: {size} bytes, {}",
            show(FIELD_COUNT.decl()),
            show(length_decl),
            too_large()
        );
        return Err(if props.is_set(length_decl) {
            PropertyError::Conflict { message }
        } else {
            props.invalid(FIELD_COUNT.decl(), message)
        });
    }
    Ok(())
}

/// `dataintegrity`, which needs constant field lengths: a value is rebuilt
/// from its key and field name at the one length to be verified.
fn data_integrity(
    props: &Properties,
    field_length: &FieldLengthSpec,
) -> Result<bool, PropertyError> {
    let data_integrity = props.get(&DATA_INTEGRITY)?;
    if data_integrity && !matches!(field_length, FieldLengthSpec::Constant(_)) {
        return Err(props.invalid(
            DATA_INTEGRITY.decl(),
            "dataintegrity needs fieldlengthdistribution=constant (values are rebuilt from key and field at their one length)",
        ));
    }
    Ok(data_integrity)
}

/// The operation mix: every kind with a proportion above zero. A mix with
/// none would never perform an operation, so it is refused, naming the
/// proportions that were set and where.
fn operation_mix(props: &Properties) -> Result<Vec<(f64, TransactionKind)>, PropertyError> {
    let proportions = [
        (&READ_PROPORTION, TransactionKind::Read),
        (&UPDATE_PROPORTION, TransactionKind::Update),
        (&INSERT_PROPORTION, TransactionKind::Insert),
        (&SCAN_PROPORTION, TransactionKind::Scan),
        (
            &READ_MODIFY_WRITE_PROPORTION,
            TransactionKind::ReadModifyWrite,
        ),
        (&DELETE_PROPORTION, TransactionKind::Delete),
    ];
    let mut mix = Vec::new();
    for (property, kind) in proportions {
        let p = props.get_checked(property, check_non_negative)?;
        if p > 0.0 {
            mix.push((p, kind));
        }
    }
    if mix.is_empty() {
        let set: Vec<String> = proportions
            .iter()
            .filter_map(|(p, _)| {
                props
                    .raw(p.decl())
                    .map(|r| format!("{}={} ({})", r.key, r.value, r.origin))
            })
            .collect();
        return Err(PropertyError::Conflict {
            message: format!(
                "operation proportions sum to zero: {}; set at least one of readproportion, updateproportion, insertproportion, scanproportion, readmodifywriteproportion, deleteproportion above 0",
                set.join(", ")
            ),
        });
    }
    Ok(mix)
}

/// The request distribution (`requestdistribution`) with its parameters,
/// over the loaded key range.
fn key_spec(props: &Properties, counts: &Counts) -> Result<KeySpec, PropertyError> {
    Ok(match props.get(&REQUEST_DISTRIBUTION)? {
        RequestDistribution::Uniform => KeySpec::Uniform(counts.insert_start, counts.last_key()),
        RequestDistribution::Sequential => {
            KeySpec::Sequential(counts.insert_start, counts.last_key())
        }
        RequestDistribution::Zipfian => zipfian_key_spec(props, counts)?,
        RequestDistribution::Latest => KeySpec::Latest,
        RequestDistribution::Hotspot => KeySpec::Hotspot {
            lb: counts.insert_start,
            ub: counts.last_key(),
            data: props.get_checked(&HOTSPOT_DATA_FRACTION, check_fraction)?,
            opn: props.get_checked(&HOTSPOT_OPN_FRACTION, check_fraction)?,
        },
        RequestDistribution::Exponential => exponential_key_spec(props, counts)?,
    })
}

/// The zipfian request distribution. Java sizes its key space for the
/// inserts the run phase is expected to make (twice the expected number, a
/// fudge factor), so that popular keys stay put as records arrive; draws
/// beyond the last acknowledged insert are redrawn.
fn zipfian_key_spec(props: &Properties, counts: &Counts) -> Result<KeySpec, PropertyError> {
    let insert_proportion = props.get(&INSERT_PROPORTION)?;
    let expected_new = (counts.operation_count as f64 * insert_proportion * 2.0) as u64;
    let theta = props.get_checked(&ZIPFIAN_CONST, |t| {
        if *t > 0.0 && *t != 1.0 {
            Ok(())
        } else {
            Err("expected a positive number other than 1".into())
        }
    })?;
    let min = counts.insert_start;
    let loaded_end = min.checked_add(counts.insert_count);
    let max = loaded_end
        .and_then(|end| end.checked_add(expected_new))
        .filter(|&max| max - min < u64::MAX);
    let Some(max) = max else {
        // The generator would refuse the range later, at the first thread,
        // under its own parameter's name; the user set a count.
        let decl = if loaded_end.is_some_and(|end| end - min < u64::MAX) {
            OPERATION_COUNT.decl()
        } else if props.is_set(INSERT_COUNT.decl()) {
            INSERT_COUNT.decl()
        } else {
            RECORD_COUNT.decl()
        };
        return Err(props.invalid(
            decl,
            "the zipfian request distribution's key range (insertstart + insertcount or \
             recordcount, plus twice the run phase's expected inserts) must have fewer than \
             2^64 keys",
        ));
    };
    Ok(KeySpec::Zipfian { min, max, theta })
}

/// The exponential request distribution, over `exponential.frac` of the
/// records.
fn exponential_key_spec(props: &Properties, counts: &Counts) -> Result<KeySpec, PropertyError> {
    let percentile = props.get_checked(&EXPONENTIAL_PERCENTILE, |p| {
        if *p > 0.0 && *p < 100.0 {
            Ok(())
        } else {
            Err("expected a percentage above 0 and below 100".into())
        }
    })?;
    let frac = props.get_checked(&EXPONENTIAL_FRAC, |f| {
        if *f > 0.0 {
            Ok(())
        } else {
            Err("expected a positive number".into())
        }
    })?;
    Ok(KeySpec::Exponential {
        percentile,
        // With no record, a run phase that chooses keys is refused
        // (`Counts::empty_key_space`): the range of one is never drawn.
        range: counts.record_count.max(1) as f64 * frac,
    })
}

/// `minscanlength` and `maxscanlength`, in order.
fn scan_length_bounds(props: &Properties) -> Result<(u64, u64), PropertyError> {
    let min_scan = props.get(&MIN_SCAN_LENGTH)?;
    let max_scan = props.get_checked(&MAX_SCAN_LENGTH, check_positive)?;
    if min_scan > max_scan {
        return Err(props.invalid(
            MIN_SCAN_LENGTH.decl(),
            format!("minscanlength exceeds maxscanlength ({max_scan})"),
        ));
    }
    Ok((min_scan, max_scan))
}

/// How key numbers become key names: `insertorder` and `zeropadding` (at
/// most 64 digits, bounding the key buffer).
fn key_naming(props: &Properties) -> Result<(KeyOrder, usize), PropertyError> {
    let key_order = match props.get(&INSERT_ORDER)? {
        InsertOrder::Hashed => KeyOrder::Hashed,
        InsertOrder::Ordered => KeyOrder::Ordered,
    };
    let zero_padding = props.get_checked(&ZERO_PADDING, |p| {
        if *p <= 64 {
            Ok(())
        } else {
            Err("expected at most 64 digits".into())
        }
    })? as usize;
    Ok((key_order, zero_padding))
}

/// The fields of a file workload: a `datafile` with rows brings its own
/// field names (and values, which `dataintegrity` cannot check); otherwise
/// the generated `field_names` stay.
fn data_file_fields(
    props: &Properties,
    data: Option<&datafile::DataSet>,
    data_integrity: bool,
    field_names: Vec<String>,
) -> Result<Vec<String>, PropertyError> {
    match data {
        Some(d) if d.has_rows() => {
            if data_integrity {
                return Err(props.invalid(
                    DATA_INTEGRITY.decl(),
                    "dataintegrity checks generated values; a datafile's values are not",
                ));
            }
            Ok(d.field_names())
        }
        _ => Ok(field_names),
    }
}

fn check_fraction(v: &f64) -> Result<(), String> {
    if (0.0..=1.0).contains(v) {
        Ok(())
    } else {
        Err("expected a number between 0 and 1".into())
    }
}

fn check_non_negative(v: &f64) -> Result<(), String> {
    if *v >= 0.0 {
        Ok(())
    } else {
        Err("expected a non-negative number".into())
    }
}

fn check_positive(v: &u64) -> Result<(), String> {
    if *v > 0 {
        Ok(())
    } else {
        Err("expected at least 1".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ycsb_db::Origin;

    fn workload(pairs: &[(&str, &str)]) -> Result<CoreWorkload, WorkloadError> {
        let mut props = Properties::new();
        for (k, v) in pairs {
            props.set(*k, *v, Origin::Flag("-p"));
        }
        CoreWorkload::from_properties(&props)
    }

    /// Java's `Client` loads `insertcount` records if set, else
    /// `recordcount`, from `insertstart`; `CoreWorkload` keeps the run
    /// phase's key range at `insertstart..insertstart+insertcount-1` with
    /// `insertcount` defaulting to `recordcount - insertstart`.
    #[test]
    fn insertstart_without_insertcount_loads_recordcount_records_as_java() {
        let w = workload(&[
            ("recordcount", "10"),
            ("insertstart", "5"),
            ("requestdistribution", "uniform"),
        ])
        .unwrap();
        assert_eq!((w.insert_start(), w.insert_count()), (5, 10));
        assert!(matches!(w.keys, KeySpec::Uniform(5, 9)));

        let w = workload(&[
            ("recordcount", "10"),
            ("insertstart", "5"),
            ("insertcount", "3"),
            ("requestdistribution", "uniform"),
        ])
        .unwrap();
        assert_eq!((w.insert_start(), w.insert_count()), (5, 3));
        assert!(matches!(w.keys, KeySpec::Uniform(5, 7)));

        // Beyond recordcount Java still loads recordcount records
        // (10..14); only a run phase that reads has no key range.
        let w = workload(&[("recordcount", "5"), ("insertstart", "10")]).unwrap();
        assert_eq!((w.insert_start(), w.insert_count()), (10, 5));
        assert!(w.check_run_phase().is_err());

        // An explicit range must still fit within recordcount, as in Java.
        assert!(workload(&[
            ("recordcount", "10"),
            ("insertstart", "5"),
            ("insertcount", "6")
        ])
        .is_err());
    }

    /// Issue 33 item 13: a key range of 2^64 keys was refused under the
    /// name of zipfian_const, which the user had not set.
    #[test]
    fn a_zipfian_key_range_too_large_names_the_count() {
        let max = u64::MAX.to_string();
        for (pairs, named) in [
            (vec![("recordcount", max.as_str())], "recordcount"),
            (
                vec![("recordcount", max.as_str()), ("insertcount", max.as_str())],
                "insertcount",
            ),
            (
                vec![
                    ("recordcount", "1000"),
                    ("operationcount", max.as_str()),
                    ("insertproportion", "0.5"),
                    ("readproportion", "0.5"),
                ],
                "operationcount",
            ),
        ] {
            let mut pairs = pairs;
            pairs.push(("requestdistribution", "zipfian"));
            let err = match workload(&pairs) {
                Ok(_) => panic!("{pairs:?}: accepted"),
                Err(e) => e.to_string(),
            };
            assert!(
                err.starts_with(&format!("{named}: invalid value ")) && err.contains("2^64"),
                "{pairs:?}: {err}"
            );
        }
    }
}
