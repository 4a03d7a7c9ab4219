//! Java YCSB's CoreWorkload: which operations, on which keys, with which
//! values.
//!
//! [`CoreWorkload`] is built once from the properties and shared by all
//! threads; each thread gets a [`WorkloadThread`] holding its own random
//! generator, key choosers and reusable buffers, so an operation allocates
//! nothing and touches no shared state except the run-phase insert counter.

mod clients;
pub mod datafile;
mod keychooser;
mod keys;
mod timing;
mod values;

pub use clients::{ClientPartition, CLIENT_COUNT, CLIENT_INDEX};
pub use keys::{build_key_name, key_name, KeyOrder, KEY_PREFIX};
pub use values::{
    build_deterministic_value, fill_random_printable, random_printable_word, ValueRng,
};

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use timing::Timing;

use ycsb_db::{
    choice_property, Fields, Properties, Property, PropertyDecl, PropertyError, Record, ScanResult,
    Status, StoreThread,
};

use crate::clock::{Clock, CLOCK};
use crate::generator::{
    seeded_rng, AcknowledgedCounter, Discrete, Exponential, GeneratorError, HistogramGenerator,
    Hotspot, NumberGenerator, Rng64, ScrambledZipfian, Sequential, SkewedLatest, Uniform, Zipfian,
    ZIPFIAN_CONSTANT,
};
use crate::measurement::{Operation, Recorder};
use keychooser::{Distribution, KeyChooser};

/// The random stream of a thread's key chooser is this bit or'ed with the
/// thread id; the thread's other draws use the thread id's own stream.
const KEY_STREAM: u64 = 1 << 40;
/// The same for the stream of a thread's field values.
const VALUE_STREAM: u64 = 2 << 40;

/// `workload`: the workload class, as Java's property files name it.
pub const WORKLOAD_CLASS: Property<String> = Property::new(
    "workload",
    "site.ycsb.workloads.CoreWorkload",
    "The workload class; only Java YCSB's CoreWorkload is implemented (its old name com.yahoo.ycsb.workloads.CoreWorkload and `core` are accepted too).",
);

/// The names under which `workload` may name the CoreWorkload.
const CORE_WORKLOAD_NAMES: &[&str] = &[
    "site.ycsb.workloads.CoreWorkload",
    "com.yahoo.ycsb.workloads.CoreWorkload",
    "core",
    "coreworkload",
];

/// `recordcount`: the number of records the load phase inserts.
pub const RECORD_COUNT: Property<u64> = Property::new(
    "recordcount",
    "1000",
    "Number of records in the data set: the load phase inserts them, the run phase chooses keys among them. (Java's built-in default is 0, which it treats as 2^31-1; every shipped workload sets 1000.)",
);
/// `operationcount`: the number of run-phase operations.
pub const OPERATION_COUNT: Property<u64> = Property::new(
    "operationcount",
    "1000",
    "Number of operations the run phase performs over all threads; 0 means no limit (stop by maxexecutiontime or Ctrl-C).",
);
/// `insertstart`: the first key number this client loads.
pub const INSERT_START: Property<u64> = Property::new(
    "insertstart",
    "0",
    "First key number to load; with insertcount it splits a load over several client processes.",
);
/// `insertcount`: how many records this client loads.
pub const INSERT_COUNT: Property<u64> = Property::optional(
    "insertcount",
    "Number of records this client loads, starting at insertstart (default: recordcount - insertstart). Run-phase reads choose keys in the same range.",
);
/// `table`: the table name passed to the store.
pub const TABLE: Property<String> = Property::new(
    "table",
    "usertable",
    "Name of the table every operation addresses.",
);
/// `fieldcount`: fields per record.
pub const FIELD_COUNT: Property<u64> =
    Property::new("fieldcount", "10", "Number of fields in a record.");
/// `fieldnameprefix`: field names are this prefix plus an index.
pub const FIELD_NAME_PREFIX: Property<String> = Property::new(
    "fieldnameprefix",
    "field",
    "Prefix of field names: fields are named field0, field1, ...",
);
/// `fieldlength`: the (maximum) length of a field value.
pub const FIELD_LENGTH: Property<u64> = Property::new(
    "fieldlength",
    "100",
    "Length of a field value in bytes (the maximum for the uniform and zipfian distributions).",
);
/// `minfieldlength`: the minimum field length for non-constant distributions.
pub const MIN_FIELD_LENGTH: Property<u64> = Property::new(
    "minfieldlength",
    "1",
    "Minimum field length for the uniform and zipfian field length distributions.",
);

choice_property! {
    /// How field lengths are drawn (`fieldlengthdistribution`).
    pub enum FieldLengthDistribution {
        /// Every field is `fieldlength` bytes.
        Constant = "constant",
        /// Uniform between `minfieldlength` and `fieldlength`.
        Uniform = "uniform",
        /// Zipfian between `minfieldlength` and `fieldlength`.
        Zipfian = "zipfian",
        /// From the histogram file `fieldlengthhistogram`.
        Histogram = "histogram",
    }
}

/// `fieldlengthdistribution`, alias YCSB-cpp's `field_len_dist`.
pub const FIELD_LENGTH_DISTRIBUTION: Property<FieldLengthDistribution> = Property::new(
    "fieldlengthdistribution",
    "constant",
    "Distribution of field lengths: constant, uniform, zipfian or histogram.",
)
.aliases(&["field_len_dist"]);
/// `fieldlengthhistogram`: the histogram file for field lengths.
pub const FIELD_LENGTH_HISTOGRAM: Property<PathBuf> = Property::new(
    "fieldlengthhistogram",
    "hist.txt",
    "Histogram file of field lengths (first line `BlockSize<TAB>b`, then `bucket<TAB>count` lines), for fieldlengthdistribution=histogram.",
);
/// `readallfields`.
pub const READ_ALL_FIELDS: Property<bool> = Property::new(
    "readallfields",
    "true",
    "Whether reads and scans fetch all fields (true) or one random field (false).",
);
/// `readallfieldsbyname`.
pub const READ_ALL_FIELDS_BY_NAME: Property<bool> = Property::new(
    "readallfieldsbyname",
    "false",
    "With readallfields, name every field in the read instead of asking for all fields.",
);
/// `writeallfields`.
pub const WRITE_ALL_FIELDS: Property<bool> = Property::new(
    "writeallfields",
    "false",
    "Whether updates write all fields (true) or one random field (false).",
);
/// `dataintegrity`.
pub const DATA_INTEGRITY: Property<bool> = Property::new(
    "dataintegrity",
    "false",
    "Write deterministic values derived from key and field name and verify every read, recording a VERIFY measurement. Requires fieldlengthdistribution=constant.",
);
/// `readproportion`.
pub const READ_PROPORTION: Property<f64> = Property::new(
    "readproportion",
    "0.95",
    "Proportion of operations that are reads.",
);
/// `updateproportion`.
pub const UPDATE_PROPORTION: Property<f64> = Property::new(
    "updateproportion",
    "0.05",
    "Proportion of operations that are updates.",
);
/// `insertproportion`.
pub const INSERT_PROPORTION: Property<f64> = Property::new(
    "insertproportion",
    "0.0",
    "Proportion of operations that are inserts.",
);
/// `scanproportion`.
pub const SCAN_PROPORTION: Property<f64> = Property::new(
    "scanproportion",
    "0.0",
    "Proportion of operations that are scans.",
);
/// `readmodifywriteproportion`.
pub const READ_MODIFY_WRITE_PROPORTION: Property<f64> = Property::new(
    "readmodifywriteproportion",
    "0.0",
    "Proportion of operations that read a record, then update it.",
);
/// `deleteproportion` (an extension: Java's CoreWorkload never deletes).
pub const DELETE_PROPORTION: Property<f64> = Property::new(
    "deleteproportion",
    "0.0",
    "Proportion of operations that delete a record (an extension of Java's CoreWorkload).",
);

choice_property! {
    /// How run-phase operations choose keys (`requestdistribution`).
    pub enum RequestDistribution {
        /// Every loaded key equally likely.
        Uniform = "uniform",
        /// Scrambled zipfian: popular keys spread over the key space.
        Zipfian = "zipfian",
        /// Skewed towards the most recently inserted keys.
        Latest = "latest",
        /// A hot set of keys gets most operations.
        Hotspot = "hotspot",
        /// Keys in order, wrapping around.
        Sequential = "sequential",
        /// Exponentially skewed towards recent inserts.
        Exponential = "exponential",
    }
}

/// `requestdistribution`.
pub const REQUEST_DISTRIBUTION: Property<RequestDistribution> = Property::new(
    "requestdistribution",
    "uniform",
    "Distribution of run-phase keys: uniform, zipfian, latest, hotspot, sequential or exponential.",
);
/// `zipfian_const` (YCSB-cpp's name; Java fixes it at 0.99).
pub const ZIPFIAN_CONST: Property<f64> = Property::new(
    "zipfian_const",
    "0.99",
    "Skew constant (theta) of the zipfian request distribution; Java YCSB fixes it at 0.99.",
)
.aliases(&["zipfianconstant"]);
/// `hotspotdatafraction`.
pub const HOTSPOT_DATA_FRACTION: Property<f64> = Property::new(
    "hotspotdatafraction",
    "0.2",
    "Hotspot distribution: fraction of the keys in the hot set.",
);
/// `hotspotopnfraction`.
pub const HOTSPOT_OPN_FRACTION: Property<f64> = Property::new(
    "hotspotopnfraction",
    "0.8",
    "Hotspot distribution: fraction of operations that go to the hot set.",
);
/// `exponential.percentile`.
pub const EXPONENTIAL_PERCENTILE: Property<f64> = Property::new(
    "exponential.percentile",
    "95",
    "Exponential distribution: percentage of operations that fall within exponential.frac of the most recent keys.",
);
/// `exponential.frac`.
pub const EXPONENTIAL_FRAC: Property<f64> = Property::new(
    "exponential.frac",
    "0.8571428571",
    "Exponential distribution: fraction of the records that exponential.percentile of operations access.",
);
/// `minscanlength`.
pub const MIN_SCAN_LENGTH: Property<u64> = Property::new(
    "minscanlength",
    "1",
    "Minimum number of records a scan reads.",
);
/// `maxscanlength`.
pub const MAX_SCAN_LENGTH: Property<u64> = Property::new(
    "maxscanlength",
    "1000",
    "Maximum number of records a scan reads.",
);

choice_property! {
    /// How scan lengths are drawn (`scanlengthdistribution`).
    pub enum ScanLengthDistribution {
        /// Uniform between `minscanlength` and `maxscanlength`.
        Uniform = "uniform",
        /// Zipfian between `minscanlength` and `maxscanlength`.
        Zipfian = "zipfian",
    }
}

/// `scanlengthdistribution`.
pub const SCAN_LENGTH_DISTRIBUTION: Property<ScanLengthDistribution> = Property::new(
    "scanlengthdistribution",
    "uniform",
    "Distribution of scan lengths: uniform or zipfian.",
);

choice_property! {
    /// `insertorder`: how key numbers map to key names.
    pub enum InsertOrder {
        /// Hash key numbers (FNV-1a 64), Java's default.
        Hashed = "hashed",
        /// Key numbers in order.
        Ordered = "ordered",
    }
}

/// `insertorder`.
pub const INSERT_ORDER: Property<InsertOrder> = Property::new(
    "insertorder",
    "hashed",
    "Order of keys: hashed (key numbers hashed with FNV-1a 64, spreading inserts) or ordered.",
);
/// `zeropadding`.
pub const ZERO_PADDING: Property<u64> = Property::new(
    "zeropadding",
    "1",
    "Key numbers are left-padded with zeros to this many digits.",
);
/// `core_workload_insertion_retry_limit`.
pub const INSERTION_RETRY_LIMIT: Property<u64> = Property::new(
    "core_workload_insertion_retry_limit",
    "0",
    "How many times a failed load insert is retried before the thread gives up.",
);
/// `core_workload_insertion_retry_interval`.
pub const INSERTION_RETRY_INTERVAL: Property<u64> = Property::new(
    "core_workload_insertion_retry_interval",
    "3",
    "Seconds between insert retries (each wait is randomised to 0.8-1.2 times this).",
);

/// Every property the CoreWorkload reads.
pub const PROPERTIES: &[&PropertyDecl] = &[
    WORKLOAD_CLASS.decl(),
    RECORD_COUNT.decl(),
    OPERATION_COUNT.decl(),
    INSERT_START.decl(),
    INSERT_COUNT.decl(),
    CLIENT_COUNT.decl(),
    CLIENT_INDEX.decl(),
    TABLE.decl(),
    FIELD_COUNT.decl(),
    FIELD_NAME_PREFIX.decl(),
    FIELD_LENGTH.decl(),
    MIN_FIELD_LENGTH.decl(),
    FIELD_LENGTH_DISTRIBUTION.decl(),
    FIELD_LENGTH_HISTOGRAM.decl(),
    READ_ALL_FIELDS.decl(),
    READ_ALL_FIELDS_BY_NAME.decl(),
    WRITE_ALL_FIELDS.decl(),
    DATA_INTEGRITY.decl(),
    READ_PROPORTION.decl(),
    UPDATE_PROPORTION.decl(),
    INSERT_PROPORTION.decl(),
    SCAN_PROPORTION.decl(),
    READ_MODIFY_WRITE_PROPORTION.decl(),
    DELETE_PROPORTION.decl(),
    REQUEST_DISTRIBUTION.decl(),
    ZIPFIAN_CONST.decl(),
    HOTSPOT_DATA_FRACTION.decl(),
    HOTSPOT_OPN_FRACTION.decl(),
    EXPONENTIAL_PERCENTILE.decl(),
    EXPONENTIAL_FRAC.decl(),
    MIN_SCAN_LENGTH.decl(),
    MAX_SCAN_LENGTH.decl(),
    SCAN_LENGTH_DISTRIBUTION.decl(),
    INSERT_ORDER.decl(),
    ZERO_PADDING.decl(),
    INSERTION_RETRY_LIMIT.decl(),
    INSERTION_RETRY_INTERVAL.decl(),
    CLOCK.decl(),
];

/// An error building the workload from its properties.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// A property is invalid.
    #[error(transparent)]
    Property(#[from] PropertyError),
    /// A generator could not be built from the properties' values.
    #[error("{property}: {source}")]
    Generator {
        /// The property (or properties) that configure the generator.
        property: &'static str,
        /// What the generator rejected.
        #[source]
        source: GeneratorError,
    },
    /// The `datafile` or `keyfile` cannot be used.
    #[error(transparent)]
    DataFile(#[from] datafile::DataSetError),
}

/// A run-phase operation kind, as the operation mix chooses them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransactionKind {
    /// Read one record.
    Read,
    /// Update one record.
    Update,
    /// Insert a new record.
    Insert,
    /// Scan a range of records.
    Scan,
    /// Read a record, then update it.
    ReadModifyWrite,
    /// Delete a record.
    Delete,
}

#[derive(Clone, Debug)]
enum FieldLengthSpec {
    Constant(u64),
    Uniform(u64, u64),
    Zipfian(u64, u64),
    Histogram(HistogramGenerator),
}

#[derive(Clone, Debug)]
enum KeySpec {
    Uniform(u64, u64),
    Zipfian {
        min: u64,
        max: u64,
        theta: f64,
    },
    Latest,
    Hotspot {
        lb: u64,
        ub: u64,
        data: f64,
        opn: f64,
    },
    Sequential(u64, u64),
    Exponential {
        percentile: f64,
        range: f64,
    },
}

/// The CoreWorkload's settings, validated, shared by every thread.
#[derive(Debug)]
pub struct CoreWorkload {
    table: String,
    field_names: Vec<String>,
    field_length: FieldLengthSpec,
    read_all_fields: bool,
    read_all_fields_by_name: bool,
    write_all_fields: bool,
    data_integrity: bool,
    mix: Vec<(f64, TransactionKind)>,
    keys: KeySpec,
    scan_length: (u64, u64, ScanLengthDistribution),
    key_order: KeyOrder,
    zero_padding: usize,
    record_count: u64,
    operation_count: u64,
    /// This client's load range (`insertstart`/`insertcount`, or its
    /// share with several clients).
    load_start: u64,
    load_count: u64,
    clients: ClientPartition,
    retry_limit: u64,
    retry_interval: Duration,
    inserts: Arc<AcknowledgedCounter>,
    clock: Clock,
    /// Records and keys from `datafile`/`keyfile`.
    data: Option<Arc<datafile::DataSet>>,
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

impl CoreWorkload {
    /// Builds the workload from properties, validating every value.
    ///
    /// # Errors
    ///
    /// A [`WorkloadError`] naming the first invalid property, its value and
    /// where it came from.
    pub fn from_properties(props: &Properties) -> Result<Self, WorkloadError> {
        // A data file decides the record count and the fields.
        let data = datafile::DataSet::from_properties(props)?.map(Arc::new);
        let with_data;
        let props = match &data {
            Some(d) => {
                with_data = d.workload_properties(props);
                &with_data
            }
            None => props,
        };
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
        let record_count = props.get(&RECORD_COUNT)?;
        let operation_count = props.get(&OPERATION_COUNT)?;
        let insert_start = props.get(&INSERT_START)?;
        let insert_count = match props.get_opt(&INSERT_COUNT)? {
            Some(count) => count,
            None => record_count.checked_sub(insert_start).ok_or_else(|| {
                props.invalid(
                    INSERT_START.decl(),
                    format!("insertstart exceeds recordcount ({record_count})"),
                )
            })?,
        };
        if insert_start
            .checked_add(insert_count)
            .is_none_or(|end| end > record_count)
        {
            return Err(props
                .invalid(
                    INSERT_COUNT.decl(),
                    format!(
                        "insertstart ({insert_start}) + insertcount ({insert_count}) exceeds recordcount ({record_count})"
                    ),
                )
                .into());
        }
        let field_count = props.get_checked(&FIELD_COUNT, check_positive)?;
        let prefix = props.get(&FIELD_NAME_PREFIX)?;
        let field_names = (0..field_count).map(|i| format!("{prefix}{i}")).collect();
        let field_length = props.get(&FIELD_LENGTH)?;
        let min_field_length = props.get(&MIN_FIELD_LENGTH)?;
        let field_length = match props.get(&FIELD_LENGTH_DISTRIBUTION)? {
            FieldLengthDistribution::Constant => FieldLengthSpec::Constant(field_length),
            dist => {
                if min_field_length > field_length {
                    return Err(props
                        .invalid(
                            MIN_FIELD_LENGTH.decl(),
                            format!("minfieldlength exceeds fieldlength ({field_length})"),
                        )
                        .into());
                }
                match dist {
                    FieldLengthDistribution::Uniform => {
                        FieldLengthSpec::Uniform(min_field_length, field_length)
                    }
                    FieldLengthDistribution::Zipfian => {
                        FieldLengthSpec::Zipfian(min_field_length, field_length)
                    }
                    _ => {
                        let path = props.get(&FIELD_LENGTH_HISTOGRAM)?;
                        FieldLengthSpec::Histogram(HistogramGenerator::from_file(&path).map_err(
                            |source| WorkloadError::Generator {
                                property: "fieldlengthhistogram",
                                source,
                            },
                        )?)
                    }
                }
            }
        };
        let data_integrity = props.get(&DATA_INTEGRITY)?;
        if data_integrity && !matches!(field_length, FieldLengthSpec::Constant(_)) {
            return Err(props
                .invalid(
                    DATA_INTEGRITY.decl(),
                    "dataintegrity needs fieldlengthdistribution=constant (values are rebuilt from key and field at their one length)",
                )
                .into());
        }

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
            }
            .into());
        }
        let insert_proportion = props.get(&INSERT_PROPORTION)?;
        let clients = ClientPartition::from_properties(props)?;
        let (load_start, load_count) = if clients.count > 1
            && !props.is_set(INSERT_START.decl())
            && !props.is_set(INSERT_COUNT.decl())
        {
            clients.load_share(record_count)
        } else {
            (insert_start, insert_count)
        };

        let keys = match props.get(&REQUEST_DISTRIBUTION)? {
            RequestDistribution::Uniform => {
                KeySpec::Uniform(insert_start, last_key(props, insert_start, insert_count)?)
            }
            RequestDistribution::Sequential => {
                KeySpec::Sequential(insert_start, last_key(props, insert_start, insert_count)?)
            }
            RequestDistribution::Zipfian => {
                // Java sizes the key space for the inserts the run phase is
                // expected to make (twice the expected number, a fudge
                // factor), so that popular keys stay put as records arrive;
                // draws beyond the last acknowledged insert are redrawn.
                let expected_new = (operation_count as f64 * insert_proportion * 2.0) as u64;
                let theta = props.get_checked(&ZIPFIAN_CONST, |t| {
                    if *t > 0.0 && *t != 1.0 {
                        Ok(())
                    } else {
                        Err("expected a positive number other than 1".into())
                    }
                })?;
                KeySpec::Zipfian {
                    min: insert_start,
                    max: insert_start + insert_count + expected_new,
                    theta,
                }
            }
            RequestDistribution::Latest => KeySpec::Latest,
            RequestDistribution::Hotspot => KeySpec::Hotspot {
                lb: insert_start,
                ub: last_key(props, insert_start, insert_count)?,
                data: props.get_checked(&HOTSPOT_DATA_FRACTION, check_fraction)?,
                opn: props.get_checked(&HOTSPOT_OPN_FRACTION, check_fraction)?,
            },
            RequestDistribution::Exponential => {
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
                KeySpec::Exponential {
                    percentile,
                    range: record_count as f64 * frac,
                }
            }
        };

        let min_scan = props.get(&MIN_SCAN_LENGTH)?;
        let max_scan = props.get_checked(&MAX_SCAN_LENGTH, check_positive)?;
        if min_scan > max_scan {
            return Err(props
                .invalid(
                    MIN_SCAN_LENGTH.decl(),
                    format!("minscanlength exceeds maxscanlength ({max_scan})"),
                )
                .into());
        }
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
        if data_integrity && data.as_ref().is_some_and(|d| d.has_rows()) {
            return Err(props
                .invalid(
                    DATA_INTEGRITY.decl(),
                    "dataintegrity checks generated values; a datafile's values are not",
                )
                .into());
        }
        let workload = Self {
            table: props.get(&TABLE)?,
            field_names: match &data {
                Some(d) if d.has_rows() => d.field_names(),
                _ => field_names,
            },
            field_length,
            read_all_fields: props.get(&READ_ALL_FIELDS)?,
            read_all_fields_by_name: props.get(&READ_ALL_FIELDS_BY_NAME)?,
            write_all_fields: props.get(&WRITE_ALL_FIELDS)?,
            data_integrity,
            mix,
            keys,
            scan_length: (
                min_scan.max(1),
                max_scan,
                props.get(&SCAN_LENGTH_DISTRIBUTION)?,
            ),
            key_order,
            zero_padding,
            record_count,
            operation_count,
            load_start,
            load_count,
            clients,
            retry_limit: props.get(&INSERTION_RETRY_LIMIT)?,
            retry_interval: Duration::from_secs(props.get(&INSERTION_RETRY_INTERVAL)?),
            inserts: Arc::new(AcknowledgedCounter::new(record_count)),
            clock: Clock::new(props.get(&CLOCK)?),
            data,
        };
        // Build one thread's generators now so that every parameter error
        // surfaces before any thread starts.
        workload.thread(0, 1, 0)?;
        Ok(workload)
    }

    /// The number of records in the data set (`recordcount`).
    pub fn record_count(&self) -> u64 {
        self.record_count
    }

    /// The number of run-phase operations (`operationcount`, 0 for no
    /// limit).
    pub fn operation_count(&self) -> u64 {
        self.operation_count
    }

    /// The number of records this client loads (`insertcount`, or its
    /// share of `recordcount` with several clients).
    pub fn insert_count(&self) -> u64 {
        self.load_count
    }

    /// The first key number this client loads (`insertstart`, or the start
    /// of its share with several clients).
    pub fn insert_start(&self) -> u64 {
        self.load_start
    }

    /// This process's place among several clients (`client.index`,
    /// `client.count`).
    pub fn clients(&self) -> ClientPartition {
        self.clients
    }

    /// The table name.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// The field names, `field0` to `field<fieldcount-1>`.
    pub fn field_names(&self) -> &[String] {
        &self.field_names
    }

    /// Whether values are deterministic and reads verified.
    pub fn data_integrity(&self) -> bool {
        self.data_integrity
    }

    /// Whether an update writes every field (`writeallfields`) rather
    /// than one.
    pub fn write_all_fields(&self) -> bool {
        self.write_all_fields
    }

    /// The mean length in bytes of a generated field value under the
    /// field length distribution (for estimating the bytes a phase wrote).
    pub fn mean_field_length(&self) -> f64 {
        if let Some(d) = self.data.as_ref().filter(|d| d.has_rows()) {
            return d.mean_field_length();
        }
        match &self.field_length {
            FieldLengthSpec::Constant(n) => *n as f64,
            FieldLengthSpec::Uniform(lb, ub) => (*lb as f64 + *ub as f64) / 2.0,
            FieldLengthSpec::Zipfian(lb, ub) => {
                // Rank r (0-based) has weight (r+1)^-θ; the range is a
                // field length, small enough to sum (capped for safety).
                let n = (ub - lb + 1).min(1_000_000);
                let theta = crate::generator::ZIPFIAN_CONSTANT;
                let (mut weights, mut weighted) = (0.0, 0.0);
                for r in 0..n {
                    let w = ((r + 1) as f64).powf(-theta);
                    weights += w;
                    weighted += r as f64 * w;
                }
                *lb as f64 + weighted / weights
            }
            FieldLengthSpec::Histogram(h) => h.mean(),
        }
    }

    /// The key name of key number `number`, as the workload builds it.
    pub fn key_name(&self, number: u64) -> String {
        if let Some(key) = self.data.as_ref().and_then(|d| d.load_key(number)) {
            return key.to_string();
        }
        key_name(number, self.key_order, self.zero_padding)
    }

    /// The key numbers thread `thread_id` of `thread_count` loads: a
    /// contiguous share of `insertstart..insertstart+insertcount`.
    ///
    /// Java hands out load key numbers from one shared counter; giving
    /// each thread its own range loads the same set of keys without a
    /// shared atomic per insert (with `insertorder=ordered` the interleaving
    /// of inserts in time differs).
    pub fn load_range(&self, thread_id: usize, thread_count: usize) -> std::ops::Range<u64> {
        split_range(self.load_start, self.load_count, thread_id, thread_count)
    }

    /// The state of one client thread, with random streams derived from
    /// `seed` and the thread's number.
    ///
    /// # Errors
    ///
    /// A [`WorkloadError`] when a generator rejects its parameters (these
    /// are checked once by [`CoreWorkload::from_properties`]).
    pub fn thread(
        &self,
        thread_id: usize,
        thread_count: usize,
        seed: u64,
    ) -> Result<WorkloadThread<'_>, WorkloadError> {
        let generator = |property: &'static str| {
            move |source: GeneratorError| WorkloadError::Generator { property, source }
        };
        let distribution = match &self.keys {
            KeySpec::Uniform(lb, ub) => Distribution::Uniform(
                Uniform::new(*lb, *ub).map_err(generator("requestdistribution"))?,
            ),
            KeySpec::Sequential(lb, ub) => Distribution::Sequential(
                Sequential::new(*lb, *ub, thread_id as u64, thread_count as u64)
                    .map_err(generator("requestdistribution"))?,
            ),
            KeySpec::Zipfian { min, max, theta } => {
                let chooser = if *theta == ZIPFIAN_CONSTANT {
                    ScrambledZipfian::new(*min, *max)
                } else {
                    ScrambledZipfian::with_constant(*min, *max, *theta)
                };
                Distribution::Zipfian(chooser.map_err(generator("zipfian_const"))?)
            }
            KeySpec::Latest => Distribution::Latest(SkewedLatest::new(self.inserts.clone())),
            KeySpec::Hotspot { lb, ub, data, opn } => Distribution::Hotspot(
                Hotspot::new(*lb, *ub, *data, *opn).map_err(generator("hotspotdatafraction"))?,
            ),
            KeySpec::Exponential { percentile, range } => Distribution::Exponential(
                Exponential::new(*percentile, *range).map_err(generator("exponential.frac"))?,
            ),
        };
        let mut keys = KeyChooser::new(
            distribution,
            seeded_rng(seed, KEY_STREAM | thread_id as u64),
        );
        if self.data.is_none() && self.zero_padding <= 20 {
            keys = keys.with_names(keychooser::Naming {
                order: self.key_order,
                zero_padding: self.zero_padding,
                clients: self.clients,
                record_count: self.record_count,
            });
        }
        let field_length = match &self.field_length {
            FieldLengthSpec::Constant(n) => FieldLength::Constant(*n as usize),
            FieldLengthSpec::Uniform(lb, ub) => FieldLength::Generator(Box::new(
                Uniform::new(*lb, *ub).map_err(generator("minfieldlength"))?,
            )),
            FieldLengthSpec::Zipfian(lb, ub) => FieldLength::Generator(Box::new(
                Zipfian::new(*lb, *ub, ZIPFIAN_CONSTANT).map_err(generator("minfieldlength"))?,
            )),
            FieldLengthSpec::Histogram(h) => FieldLength::Generator(Box::new(h.clone())),
        };
        let (min_scan, max_scan, scan_dist) = self.scan_length;
        let scan_length: Box<dyn NumberGenerator> = match scan_dist {
            ScanLengthDistribution::Uniform => {
                Box::new(Uniform::new(min_scan, max_scan).map_err(generator("minscanlength"))?)
            }
            ScanLengthDistribution::Zipfian => Box::new(
                Zipfian::new(min_scan, max_scan, ZIPFIAN_CONSTANT)
                    .map_err(generator("minscanlength"))?,
            ),
        };
        let range = self.load_range(thread_id, thread_count);
        Ok(WorkloadThread {
            workload: self,
            origin: (thread_id, thread_count, seed),
            local: false,
            rng: seeded_rng(seed, thread_id as u64),
            value_rng: ValueRng::new(rand::RngCore::next_u64(&mut seeded_rng(
                seed,
                VALUE_STREAM | thread_id as u64,
            ))),
            keys,
            operations: Discrete::new(self.mix.clone()).map_err(generator("readproportion"))?,
            field_chooser: Uniform::new(0, self.field_names.len() as u64 - 1)
                .map_err(generator("fieldcount"))?,
            field_length,
            scan_length,
            next_load: range.start,
            load_end: range.end,
            timing: Timing::new(self.clock),
            key: String::with_capacity(KEY_PREFIX.len() + 24),
            values: Record::with_capacity(self.field_names.len(), 0),
            read: Record::new(),
            scan: ScanResult::new(),
            expected: Vec::new(),
            pending_acks: Vec::new(),
            rows: match &self.data {
                Some(d) if d.has_rows() => Some(
                    d.reader(range.start)
                        .map_err(|e| WorkloadError::DataFile(e.into()))?,
                ),
                _ => None,
            },
        })
    }
}

fn last_key(
    props: &Properties,
    insert_start: u64,
    insert_count: u64,
) -> Result<u64, PropertyError> {
    if insert_count == 0 {
        return Err(props.invalid(
            INSERT_COUNT.decl(),
            "the run phase needs at least one loaded record to choose keys from",
        ));
    }
    Ok(insert_start + insert_count - 1)
}

/// Splits `count` items starting at `start` into `parts` contiguous ranges
/// whose sizes differ by at most one (earlier parts get the remainder, as
/// Java splits operation counts over threads).
pub fn split_range(start: u64, count: u64, part: usize, parts: usize) -> std::ops::Range<u64> {
    let parts = parts.max(1) as u64;
    let part = part as u64;
    let base = count / parts;
    let extra = count % parts;
    let begin = start + part * base + part.min(extra);
    let len = base + u64::from(part < extra);
    begin..begin + len
}

enum FieldLength {
    Constant(usize),
    Generator(Box<dyn NumberGenerator>),
}

/// One client thread's workload state: random streams, generators and
/// reusable buffers.
pub struct WorkloadThread<'w> {
    workload: &'w CoreWorkload,
    /// (thread id, thread count, seed) this state was built for, to build
    /// it again on the thread that runs it.
    origin: (usize, usize, u64),
    /// Whether the state was built by the thread that runs it.
    local: bool,
    rng: Rng64,
    /// The stream field values are drawn from.
    value_rng: ValueRng,
    keys: KeyChooser,
    operations: Discrete<TransactionKind>,
    field_chooser: Uniform,
    field_length: FieldLength,
    scan_length: Box<dyn NumberGenerator>,
    next_load: u64,
    load_end: u64,
    timing: Timing,
    key: String,
    values: Record,
    read: Record,
    scan: ScanResult,
    expected: Vec<u8>,
    pending_acks: Vec<u64>,
    /// This thread's reader of `datafile` rows, for the load phase.
    rows: Option<datafile::RowReader>,
}

impl<'w> WorkloadThread<'w> {
    /// The fields a read asks for, as Java's `doTransactionRead`: one
    /// random field unless `readallfields`; every field by name when values
    /// are verified or `readallfieldsbyname` is set; otherwise all fields.
    fn read_selection(&mut self) -> Fields<'w> {
        let workload: &'w CoreWorkload = self.workload;
        if !workload.read_all_fields {
            let index = self.random_field();
            Fields::Only(std::slice::from_ref(&workload.field_names[index]))
        } else if workload.data_integrity || workload.read_all_fields_by_name {
            Fields::Only(&workload.field_names)
        } else {
            Fields::All
        }
    }

    /// The fields a scan asks for: all, or one random field.
    fn scan_selection(&mut self) -> Fields<'w> {
        let workload: &'w CoreWorkload = self.workload;
        if workload.read_all_fields {
            Fields::All
        } else {
            let index = self.random_field();
            Fields::Only(std::slice::from_ref(&workload.field_names[index]))
        }
    }
}

impl WorkloadThread<'_> {
    /// Builds this state again on the calling thread before its first
    /// operation. The runner builds every thread's state up front (so that
    /// errors surface before any thread starts), which packs the buffers of
    /// all threads next to each other in its own heap: a key buffer written
    /// on every operation could then share a cache line with another
    /// thread's data, and the line would bounce between cores on every
    /// operation. Built again here, the buffers come from the running
    /// thread's own malloc arena.
    #[inline]
    fn make_local(&mut self) {
        if !self.local {
            self.relocate();
        }
    }

    #[cold]
    #[inline(never)]
    fn relocate(&mut self) {
        let (thread_id, thread_count, seed) = self.origin;
        // Nothing has been drawn yet, so the new state is the same state;
        // building it succeeded once already.
        if let Ok(fresh) = self.workload.thread(thread_id, thread_count, seed) {
            *self = fresh;
        }
        self.local = true;
    }

    /// The number of load inserts left for this thread.
    pub fn load_remaining(&self) -> u64 {
        self.load_end.saturating_sub(self.next_load)
    }

    /// Lets `recorder` publish if its period has passed by the end of the
    /// last operation (checked cheaply; call it after each operation).
    #[inline]
    pub fn publish_if_due(&mut self, recorder: &mut Recorder) {
        self.timing.publish_if_due(recorder);
    }

    /// Loads the next record of this thread's range (Java's `doInsert`),
    /// retrying as `core_workload_insertion_retry_limit` says. Returns
    /// whether the insert finally succeeded; Java's load thread stops at
    /// the first insert that fails for good, and the runner does the same.
    pub fn do_insert(&mut self, db: &mut dyn StoreThread, recorder: &mut Recorder) -> bool {
        self.make_local();
        let number = self.next_load;
        self.next_load += 1;
        build_key_name(
            number,
            self.workload.key_order,
            self.workload.zero_padding,
            &mut self.key,
        );
        if let Some(rows) = &mut self.rows {
            // The file was checked when the workload was built; a row that
            // no longer reads means it changed, and the load stops there.
            if rows.next_row(&mut self.key, &mut self.values).is_err() {
                return false;
            }
        } else {
            self.build_values(true);
        }
        let mut retries = 0;
        loop {
            let (workload, key, values) = (self.workload, &self.key, &self.values);
            let status = self.timing.measure(recorder, Operation::Insert, None, || {
                db.insert(&workload.table, key, values)
            });
            if status.is_ok() {
                return true;
            }
            retries += 1;
            // A phase asked to stop retries no more (and its wait ends).
            if retries > self.workload.retry_limit || crate::runner::interrupt::stopped() {
                return false;
            }
            let jitter = 0.8 + 0.4 * rand::Rng::random::<f64>(&mut self.rng);
            crate::runner::interrupt::pause(self.workload.retry_interval.mul_f64(jitter));
        }
    }

    /// Performs one run-phase operation chosen by the operation mix
    /// (Java's `doTransaction`). `intended_start` is when the operation
    /// was scheduled to start under a target rate; its latency is then also
    /// recorded from that moment (coordinated-omission correction).
    pub fn do_transaction(
        &mut self,
        db: &mut dyn StoreThread,
        recorder: &mut Recorder,
        intended_start: Option<Instant>,
    ) -> TransactionKind {
        self.make_local();
        let kind = self.operations.next(&mut self.rng);
        match kind {
            TransactionKind::Read => self.transaction_read(db, recorder, intended_start),
            TransactionKind::Update => self.transaction_update(db, recorder, intended_start),
            TransactionKind::Insert => self.transaction_insert(db, recorder, intended_start),
            TransactionKind::Scan => self.transaction_scan(db, recorder, intended_start),
            TransactionKind::ReadModifyWrite => {
                self.transaction_read_modify_write(db, recorder, intended_start)
            }
            TransactionKind::Delete => self.transaction_delete(db, recorder, intended_start),
        }
        kind
    }

    /// The key number of the next run-phase operation: drawn from the
    /// request distribution, never beyond the last acknowledged insert.
    /// Chooses the key of the next run-phase operation into `self.key`:
    /// drawn from the request distribution, never beyond the last
    /// acknowledged insert.
    fn next_key(&mut self) {
        let workload = self.workload;
        let limit = workload.inserts.limit().unwrap_or(0);
        let drawn = self.keys.next(limit);
        if let Some(name) = self.keys.last_name() {
            self.key.clear();
            self.key.push_str(name);
            return;
        }
        let number = workload.clients.key_number(workload.record_count, drawn);
        if let Some(key) = workload.data.as_ref().and_then(|d| d.run_key(number)) {
            self.key.clear();
            self.key.push_str(key);
            return;
        }
        build_key_name(
            number,
            self.workload.key_order,
            self.workload.zero_padding,
            &mut self.key,
        );
    }

    fn random_field(&mut self) -> usize {
        self.field_chooser.next_value(&mut self.rng) as usize
    }

    fn next_field_length(&mut self) -> usize {
        match &mut self.field_length {
            FieldLength::Constant(n) => *n,
            FieldLength::Generator(g) => g.next_value(&mut self.rng) as usize,
        }
    }

    /// Fills `self.values` for the current key: every field, or one random
    /// field.
    fn build_values(&mut self, all_fields: bool) {
        self.values.clear();
        let workload = self.workload;
        if all_fields {
            match self.field_length {
                // The common case, every field the same length and random:
                // one generation run for the whole record.
                FieldLength::Constant(length) if !workload.data_integrity => {
                    let rng = &mut self.value_rng;
                    self.values
                        .push_fields_chunked(&workload.field_names, length, || {
                            random_printable_word(rng)
                        });
                }
                _ => {
                    for index in 0..workload.field_names.len() {
                        self.push_value(index);
                    }
                }
            }
        } else {
            let index = self.random_field();
            self.push_value(index);
        }
    }

    fn push_value(&mut self, index: usize) {
        let name = &self.workload.field_names[index];
        let length = self.next_field_length();
        if self.workload.data_integrity {
            build_deterministic_value(&self.key, name, length, &mut self.expected);
            self.values.push(name, &self.expected);
        } else {
            let rng = &mut self.value_rng;
            self.values
                .push_chunks(name, length, || random_printable_word(rng));
        }
    }

    fn transaction_read(
        &mut self,
        db: &mut dyn StoreThread,
        recorder: &mut Recorder,
        intended: Option<Instant>,
    ) {
        self.next_key();
        let workload = self.workload;
        let fields = self.read_selection();
        self.read.clear();
        let (key, read) = (&self.key, &mut self.read);
        self.timing
            .measure(recorder, Operation::Read, intended, || {
                read_record(
                    db,
                    &workload.table,
                    key,
                    fields,
                    read,
                    workload.data_integrity,
                )
            });
        if workload.data_integrity {
            self.verify(recorder);
        }
    }

    /// Java's `verifyRow`: every field read must equal its deterministic
    /// value; an empty read is an error.
    fn verify(&mut self, recorder: &mut Recorder) {
        let start = self.timing.now();
        let status = if self.read.is_empty() {
            Status::Error
        } else {
            let mut status = Status::Ok;
            for index in 0..self.read.len() {
                let Some(field) = self.read.field(index) else {
                    break;
                };
                build_deterministic_value(
                    &self.key,
                    field.name,
                    self.constant_length(),
                    &mut self.expected,
                );
                if self.expected != field.value {
                    status = Status::UnexpectedState;
                    break;
                }
            }
            status
        };
        recorder.record(Operation::Verify, status, self.timing.since(start));
    }

    fn constant_length(&self) -> usize {
        match self.field_length {
            FieldLength::Constant(n) => n,
            FieldLength::Generator(_) => 0,
        }
    }

    fn transaction_update(
        &mut self,
        db: &mut dyn StoreThread,
        recorder: &mut Recorder,
        intended: Option<Instant>,
    ) {
        self.next_key();
        self.build_values(self.workload.write_all_fields);
        let (workload, key, values) = (self.workload, &self.key, &self.values);
        self.timing
            .measure(recorder, Operation::Update, intended, || {
                db.update(&workload.table, key, values)
            });
    }

    fn transaction_insert(
        &mut self,
        db: &mut dyn StoreThread,
        recorder: &mut Recorder,
        intended: Option<Instant>,
    ) {
        let inserts = &self.workload.inserts;
        let number = inserts.next();
        build_key_name(
            // Acknowledged below by its counter number; the key number
            // keeps clients' inserts apart.
            self.workload
                .clients
                .key_number(self.workload.record_count, number),
            self.workload.key_order,
            self.workload.zero_padding,
            &mut self.key,
        );
        self.build_values(true);
        let (workload, key, values) = (self.workload, &self.key, &self.values);
        self.timing
            .measure(recorder, Operation::Insert, intended, || {
                db.insert(&workload.table, key, values)
            });
        // Java acknowledges whatever the outcome, so that one failed insert
        // does not freeze the readable key range.
        self.acknowledge(number);
    }

    /// Acknowledges a run-phase insert. When one slow insert holds the
    /// oldest unacknowledged number, the others can run a whole window
    /// ahead and their acknowledgements overflow it (Java throws then);
    /// such numbers are kept and retried on this thread's later inserts
    /// and at its end, so the readable limit never stays stuck.
    fn acknowledge(&mut self, number: u64) {
        let inserts = &self.workload.inserts;
        self.pending_acks.retain(|&pending| {
            matches!(
                inserts.acknowledge(pending),
                Err(GeneratorError::WindowOverflow { .. })
            )
        });
        if let Err(GeneratorError::WindowOverflow { .. }) = inserts.acknowledge(number) {
            self.pending_acks.push(number);
        }
    }

    /// Retries acknowledgements that overflowed the window; the runner
    /// calls it when the thread ends, waiting for slower threads to catch
    /// up.
    pub fn finish(&mut self) {
        let inserts = &self.workload.inserts;
        let mut rounds = 0u32;
        while !self.pending_acks.is_empty() && rounds < 10_000 {
            self.pending_acks.retain(|&pending| {
                matches!(
                    inserts.acknowledge(pending),
                    Err(GeneratorError::WindowOverflow { .. })
                )
            });
            if !self.pending_acks.is_empty() {
                std::thread::sleep(Duration::from_millis(1));
            }
            rounds += 1;
        }
    }

    fn transaction_scan(
        &mut self,
        db: &mut dyn StoreThread,
        recorder: &mut Recorder,
        intended: Option<Instant>,
    ) {
        self.next_key();
        let length = self.scan_length.next_value(&mut self.rng) as usize;
        let workload = self.workload;
        let fields = self.scan_selection();
        self.scan.clear();
        let (key, scan) = (&self.key, &mut self.scan);
        self.timing
            .measure(recorder, Operation::Scan, intended, || {
                db.scan(&workload.table, key, length, fields, scan)
            });
    }

    fn transaction_read_modify_write(
        &mut self,
        db: &mut dyn StoreThread,
        recorder: &mut Recorder,
        intended: Option<Instant>,
    ) {
        self.next_key();
        let workload = self.workload;
        let fields = self.read_selection();
        self.build_values(workload.write_all_fields);
        let start = self.timing.now();
        self.read.clear();
        let (key, read, values) = (&self.key, &mut self.read, &self.values);
        let read_status = self
            .timing
            .measure(recorder, Operation::Read, intended, || {
                read_record(
                    db,
                    &workload.table,
                    key,
                    fields,
                    read,
                    workload.data_integrity,
                )
            });
        let update_status = self
            .timing
            .measure(recorder, Operation::Update, intended, || {
                db.update(&workload.table, key, values)
            });
        // Java measures the whole read-modify-write from the start of the
        // read to the end of the update and reports no status for it; we
        // report the first failing step's status (OK when both succeed).
        let status = if read_status.is_ok() {
            update_status
        } else {
            read_status
        };
        self.timing.record_span(
            recorder,
            Operation::ReadModifyWrite,
            status,
            intended,
            start,
        );
        if workload.data_integrity {
            self.verify(recorder);
        }
    }

    fn transaction_delete(
        &mut self,
        db: &mut dyn StoreThread,
        recorder: &mut Recorder,
        intended: Option<Instant>,
    ) {
        self.next_key();
        let (workload, key) = (self.workload, &self.key);
        self.timing
            .measure(recorder, Operation::Delete, intended, || {
                db.delete(&workload.table, key)
            });
    }
}

/// A read as the workload needs it: copied into `out` when the values are
/// kept to be verified, and otherwise looked at in place, as Java's
/// `CoreWorkload` drops the values it read unless `dataintegrity` is on.
#[inline(always)]
fn read_record(
    db: &mut dyn StoreThread,
    table: &str,
    key: &str,
    fields: Fields<'_>,
    out: &mut Record,
    keep_values: bool,
) -> Status {
    if keep_values {
        db.read(table, key, fields, out)
    } else {
        db.read_in_place(table, key, fields, out, &mut |_| {})
    }
}
