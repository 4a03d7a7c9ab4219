//! The properties the CoreWorkload reads: one declaration each (name,
//! default, meaning), from which typed access, the properties reference and
//! the unknown-property warning all come.

use std::path::PathBuf;

use ycsb_db::{choice_property, Property, PropertyDecl};

use super::clients::{CLIENT_COUNT, CLIENT_INDEX};
use crate::clock::CLOCK;

/// `workload`: the workload class, as Java's property files name it.
pub const WORKLOAD_CLASS: Property<String> = Property::new(
    "workload",
    "site.ycsb.workloads.CoreWorkload",
    "The workload class; only Java YCSB's CoreWorkload is implemented (its old name com.yahoo.ycsb.workloads.CoreWorkload and `core` are accepted too).",
);

/// The names under which `workload` may name the CoreWorkload.
pub(super) const CORE_WORKLOAD_NAMES: &[&str] = &[
    "site.ycsb.workloads.CoreWorkload",
    "com.yahoo.ycsb.workloads.CoreWorkload",
    "core",
    "coreworkload",
];

/// `recordcount`: the number of records the load phase inserts.
pub const RECORD_COUNT: Property<u64> = Property::new(
    "recordcount",
    "1000",
    "Number of records in the data set: the load phase inserts them, the run phase chooses keys among them. 0, set explicitly, is Java's: the load phase inserts until stopped (maxexecutiontime, Ctrl-C) unless insertcount says how many, and the run phase chooses among 2^31-1 keys (Integer.MAX_VALUE) and inserts from there. The default differs from Java's on purpose: Java's built-in default is 0; every shipped workload sets 1000, and so does this default.",
);
/// `operationcount`: the number of run-phase operations.
pub const OPERATION_COUNT: Property<u64> = Property::new(
    "operationcount",
    "1000",
    "Number of operations the run phase performs over all threads; 0 means no limit (stop by maxexecutiontime or Ctrl-C), as in Java. The default differs from Java's on purpose: Java's built-in default is 0, so a forgotten operationcount runs until stopped; every shipped workload sets 1000, and so does this default.",
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
    "Number of records this client loads, starting at insertstart (default: recordcount, as Java's Client). Run-phase reads choose keys in insertstart..insertstart+insertcount-1, insertcount there defaulting to recordcount - insertstart (Java's CoreWorkload).",
);
/// `table`: the table name passed to the store.
pub const TABLE: Property<String> = Property::new(
    "table",
    "usertable",
    "Name of the table every operation addresses.",
);
/// `fieldcount`: fields per record.
pub const FIELD_COUNT: Property<u64> = Property::new(
    "fieldcount",
    "10",
    "Number of fields in a record (at most 1048576; a record, names and values, is at most 64 MiB).",
);

/// The largest record a workload writes, names and values: 64 MiB.
pub(crate) const MAX_RECORD_SIZE: u64 = 64 << 20;
/// The most fields a record has.
pub(crate) const MAX_FIELD_COUNT: u64 = 1 << 20;
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
    "Length of a field value in bytes (the maximum for the uniform and zipfian distributions); fieldcount times the longest field is at most 64 MiB, the maximum record size.",
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
    "Write deterministic values derived from key and field name and verify every read, recording a VERIFY measurement: UNEXPECTED_STATE when a value differs or, unlike Java, when the record lacks a field asked for or holds one the workload never writes (with readallfields, the whole record is read). Requires fieldlengthdistribution=constant.",
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

/// `maxscanrate`: in Java's `workload_template`, read only by Java's
/// Google Bigtable 2 binding; accepted so that the template runs verbatim.
pub const MAX_SCAN_RATE: Property<f64> = Property::new(
    "maxscanrate",
    "0",
    "Accepted and ignored: Java's workload_template sets it, but only Java's Google Bigtable 2 binding reads it (records scanned per second); no store here implements it.",
);
/// `scanoptimelimit`: as [`MAX_SCAN_RATE`].
pub const SCAN_OP_TIME_LIMIT: Property<f64> = Property::new(
    "scanoptimelimit",
    "0",
    "Accepted and ignored: Java's workload_template sets it, but only Java's Google Bigtable 2 binding reads it (seconds a scan may take); no store here implements it.",
);
/// `discardscannedrecord`: as [`MAX_SCAN_RATE`].
pub const DISCARD_SCANNED_RECORD: Property<bool> = Property::new(
    "discardscannedrecord",
    "false",
    "Accepted and ignored: Java's workload_template sets it, but only Java's Google Bigtable 2 binding reads it; here scans never keep the records they read beyond the operation.",
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

/// `core_workload_insertion_keep_going_on_error` (Java master).
pub const INSERTION_KEEP_GOING_ON_ERROR: Property<bool> = Property::new(
    "core_workload_insertion_keep_going_on_error",
    "false",
    "Whether a load thread goes on to its next record after an insert failed for good (after the retries), as Java's; false: the thread stops there and the load is incomplete (exit status 1). With true the failed inserts are counted under [INSERT], Return=ERROR, a notice says how many records are missing, and the phases go on.",
);

/// The most records one batched call carries.
pub(crate) const MAX_BATCH_SIZE: i128 = 1_000_000;

/// `batch.size` (go-ycsb): records per store call.
pub const BATCH_SIZE: Property<u64> = Property::new(
    "batch.size",
    "1",
    "Records per store call, as go-ycsb's batch.size: the load inserts this many records in one call (the store's batch: a write batch, a transaction, a pipeline; docs/engines-*.md say which), and the run phase draws one operation kind and performs this many of it (reads, updates, inserts or deletes) in one call; scans and read-modify-writes, which have no batch form, are performed this many times one by one. Each record is measured in its operation's section ([INSERT], Operations counts records, each with its batch's latency) and each call in its own, BATCH_INSERT, BATCH_READ, BATCH_UPDATE or BATCH_DELETE; the throughput counts records. 1: every record in its own call.",
)
.range(1, MAX_BATCH_SIZE);

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
    MAX_SCAN_RATE.decl(),
    SCAN_OP_TIME_LIMIT.decl(),
    DISCARD_SCANNED_RECORD.decl(),
    INSERT_ORDER.decl(),
    ZERO_PADDING.decl(),
    INSERTION_RETRY_LIMIT.decl(),
    INSERTION_RETRY_INTERVAL.decl(),
    INSERTION_KEEP_GOING_ON_ERROR.decl(),
    BATCH_SIZE.decl(),
    CLOCK.decl(),
];
