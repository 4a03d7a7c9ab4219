//! Bad input: every case exits with status 2 and one clear line on
//! standard error naming the input and where it came from (and nothing
//! else on standard error or standard output), never a panic.

mod common;

use common::*;

struct Case {
    args: &'static str,
    /// A property file to write first, as `bad.properties` in a temp dir
    /// (`{dir}` in `args` is replaced by that dir).
    file: Option<&'static str>,
    expect: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case { args: "load basic -P workloads/nonexistent", file: None, expect: &["workloads/nonexistent"] },
    Case { args: "load basic -p recordcount=ten", file: None, expect: &["recordcount", "'ten'", "-p flag"] },
    Case { args: "load basic -p recordcount=-5", file: None, expect: &["recordcount", "'-5'"] },
    Case { args: "load basic -P {dir}/bad.properties", file: Some("# c\nrecordcount=12x\n"), expect: &["recordcount", "bad.properties:2"] },
    Case { args: "run basic -p readproportion=0 -p updateproportion=0", file: None, expect: &["proportions sum to zero"] },
    Case { args: "run basic -p readproportion=-0.5", file: None, expect: &["readproportion", "non-negative"] },
    Case { args: "run basic -p requestdistribution=pareto", file: None, expect: &["requestdistribution", "'pareto'", "uniform, zipfian"] },
    Case { args: "load basic -p insertorder=random", file: None, expect: &["insertorder", "'random'", "hashed, ordered"] },
    Case { args: "load nosuchdb", file: None, expect: &["unknown store 'nosuchdb'"] },
    Case { args: "-load -db basic --frobnicate", file: None, expect: &["unknown flag '--frobnicate'"] },
    Case { args: "load basic -threads zero", file: None, expect: &["threadcount", "'zero'", "-threads flag"] },
    Case { args: "load basic -threads 0", file: None, expect: &["threadcount", "'0'"] },
    Case { args: "run basic -target -3", file: None, expect: &["target", "'-3'"] },
    Case { args: "load basic -p fieldcount=0", file: None, expect: &["fieldcount", "at least 1"] },
    Case { args: "load basic -p fieldlengthdistribution=gauss", file: None, expect: &["fieldlengthdistribution", "'gauss'"] },
    Case { args: "load basic -p field_len_dist=gauss", file: None, expect: &["field_len_dist", "'gauss'"] },
    Case { args: "load basic -p dataintegrity=true -p fieldlengthdistribution=uniform", file: None, expect: &["dataintegrity"] },
    Case { args: "load basic -p insertcount=10 -p recordcount=5", file: None, expect: &["insertcount"] },
    Case { args: "run basic -p minscanlength=10 -p maxscanlength=5", file: None, expect: &["minscanlength"] },
    Case { args: "run basic -p hotspotdatafraction=1.5 -p requestdistribution=hotspot", file: None, expect: &["hotspotdatafraction", "'1.5'"] },
    Case { args: "run basic -p zipfian_const=-1 -p requestdistribution=zipfian", file: None, expect: &["zipfian_const"] },
    Case { args: "load basic -p readallfields=maybe", file: None, expect: &["readallfields", "true or false"] },
    Case { args: "load basic -p fieldlengthdistribution=histogram -p fieldlengthhistogram=/nonexistent/h.txt", file: None, expect: &["/nonexistent/h.txt"] },
    Case { args: "load basic -p workload=site.ycsb.workloads.TimeSeriesWorkload", file: None, expect: &["workload", "CoreWorkload"] },
    Case { args: "load basic -p measurementtype=timeseries -p timeseries.granularity=0", file: None, expect: &["timeseries.granularity", "measurementtype=timeseries"] },
    Case { args: "load basic -p measurementtype=hdr", file: None, expect: &["measurementtype", "'hdr'"] },
    Case { args: "load basic -p latencytrackederrors=TIMEOUT", file: None, expect: &["latencytrackederrors", "'TIMEOUT' is not a status"] },
    Case { args: "load basic -p hdrhistogram.percentiles=50,abc", file: None, expect: &["hdrhistogram.percentiles", "abc"] },
    Case { args: "load basic -p status.interval=0", file: None, expect: &["status.interval"] },
    Case { args: "load basic -p exporter=xml", file: None, expect: &["exporter", "'xml'"] },
    Case { args: "load basic -p maxexecutiontime=soon", file: None, expect: &["maxexecutiontime", "'soon'"] },
    Case { args: "load basic -p seed=abc", file: None, expect: &["seed", "'abc'"] },
    Case { args: "load basic -p basicdb.simulatedelay=slow", file: None, expect: &["basicdb.simulatedelay", "'slow'"] },
    Case { args: "load basic -P {dir}/bad.properties", file: Some("key=\\uZZZZ\n"), expect: &["bad.properties:1"] },
    Case { args: "load basic -p novalue", file: None, expect: &["-p 'novalue'"] },
    Case { args: "load", file: None, expect: &["needs the store's name"] },
    Case { args: "-db basic -p doload=false", file: None, expect: &["doload", "no phase", "-p flag"] },
    Case { args: "-db basic -p dotransactions=maybe", file: None, expect: &["dotransactions", "'maybe'"] },
    Case { args: "-load -db basic -p sleepafterload=-1", file: None, expect: &["sleepafterload", "'-1'"] },
    Case { args: "-load -db basic -l", file: None, expect: &["-l needs a value"] },
    Case { args: "shell", file: None, expect: &["'ycsb shell' needs a store"] },
    Case { args: "shell memory -p recordcount=x", file: None, expect: &["recordcount", "'x'"] },
    Case { args: "-load -db basic -P", file: None, expect: &["-P needs a value"] },
    Case { args: "load basic extra", file: None, expect: &["unexpected argument 'extra'"] },
    Case { args: "load leveldb", file: None, expect: &["leveldb.dbname"] },
    Case { args: "load basic -p zeropadding=100", file: None, expect: &["zeropadding"] },
    Case { args: "load basic -p batch.size=0", file: None, expect: &["batch.size", "expected 1 to 1000000"] },
    // Issue 9 (reliability): the error budget, `ycsb serve`, store
    // properties, data files, export targets checked before running.
    Case { args: "run basic -p errorbudget=-1", file: None, expect: &["errorbudget", "'-1'", "-p flag"] },
    Case { args: "run basic -p errorbudget=lots", file: None, expect: &["errorbudget", "'lots'"] },
    Case { args: "serve memory --resp 127.0.0.1:99999", file: None, expect: &["--resp", "127.0.0.1:99999"] },
    // Issue 19 item 7: the live view.
    Case { args: "load memory -p live.port=http", file: None, expect: &["live.port", "'http'"] },
    Case { args: "load memory -p live.port=0 -p live.address=localhost", file: None, expect: &["live.address", "'localhost'", "IP address"] },
    Case { args: "load memory -p live.port=0 -p timeseries.granularity=0", file: None, expect: &["live.port", "timeseries.granularity=0"] },
    Case { args: "load memory -p live.port=0 -p live.linger=-1", file: None, expect: &["live.linger", "'-1'"] },
    Case { args: "serve memory --http ::1", file: None, expect: &["--http '::1'"] },
    Case { args: "serve memory -p a", file: None, expect: &["-p 'a'"] },
    Case { args: "serve nosuchstore --resp 0 --http 0", file: None, expect: &["unknown store 'nosuchstore'"] },
    Case { args: "load redis -p redis.port=abc", file: None, expect: &["redis.port", "'abc'", "-p flag"] },
    Case { args: "load redis -p redis.port=70000", file: None, expect: &["redis.port", "'70000'"] },
    Case { args: "load memcached -p memcached.protocol=udp", file: None, expect: &["memcached.protocol", "'udp'", "text, binary"] },
    Case { args: "load memcached -p memcached.hosts=h:x", file: None, expect: &["memcached.hosts", "'h:x' is not host or host:port"] },
    Case { args: "load jdbc -p db.url=jdbc:oracle://h/d?password=Pw1", file: None, expect: &["db.url", "'jdbc:oracle:' is not a server", "-p flag", "password=<redacted>"] },
    Case { args: "load jdbc -p db.url=jdbc:postgresql://h:x/d", file: None, expect: &["db.url", "'x' is not a port"] },
    Case { args: "load postgresql -p jdbc.autocommit=maybe", file: None, expect: &["jdbc.autocommit", "'maybe'"] },
    Case { args: "load memcached -p memcached.failureMode=Panic", file: None, expect: &["memcached.failureMode", "Redistribute, Retry, Cancel"] },
    Case { args: "load leveldb -p leveldb.dbname={dir}/db -p leveldb.sync=maybe", file: None, expect: &["leveldb.sync", "'maybe'"] },
    Case { args: "load leveldb -p leveldb.dbname={dir}/db -p leveldb.compression=zstdx", file: None, expect: &["leveldb.compression", "'zstdx'"] },
    Case { args: "load leveldb -p leveldb.dbname={dir}/bad.properties", file: Some("x=1\n"), expect: &["leveldb.dbname", "bad.properties", "-p flag"] },
    Case { args: "load basic -p fieldlengthdistribution=histogram -p fieldlengthhistogram={dir}/bad.properties", file: Some("abc\n"), expect: &["fieldlengthhistogram", "bad.properties:1"] },
    Case { args: "load basic -p fieldlengthdistribution=histogram -p fieldlengthhistogram={dir}", file: None, expect: &["fieldlengthhistogram", "cannot read"] },
    Case { args: "load basic -P {dir}", file: None, expect: &["cannot read property file"] },
    Case { args: "load basic -P {dir}/bad.properties", file: Some("recordcount=1\nrecordcount=x\n"), expect: &["recordcount", "'x'", "bad.properties:2"] },
    Case { args: "run basic -p operationcount=1e6", file: None, expect: &["operationcount", "'1e6'"] },
    Case { args: "run basic -p scanlengthdistribution=normal", file: None, expect: &["scanlengthdistribution", "'normal'"] },
    Case { args: "run basic -p recordcount=99999999999999999999999", file: None, expect: &["recordcount", "'99999999999999999999999'"] },
    Case { args: "run basic -p measurement.interval=sometimes", file: None, expect: &["measurement.interval", "'sometimes'"] },
    Case { args: "run basic -p exportfile=/nonexistent/dir/out.json", file: None, expect: &["exportfile", "/nonexistent/dir", "-p flag"] },
    Case { args: "run basic -p exportfile={dir}", file: None, expect: &["exportfile", "is a directory"] },
    Case { args: "load http -p http.url=notaurl", file: None, expect: &["http.url", "'notaurl'"] },
    Case { args: "load memory -threads 5000", file: None, expect: &["threadcount", "'5000'", "-threads flag"] },
    Case { args: "run basic -p requestdistribution=exponential -p exponential.percentile=150", file: None, expect: &["exponential.percentile", "'150'"] },
    Case { args: "-load -run -db basic -threads", file: None, expect: &["-threads needs a value"] },
    Case { args: "properties --json", file: None, expect: &["'--json'"] },
    Case { args: "run basic -p measurement.warmup=soon", file: None, expect: &["measurement.warmup", "'soon'", "100000ops"] },
    Case { args: "run basic -p timeseries.granularity=0.001", file: None, expect: &["timeseries.granularity", "'0.001'"] },
    Case { args: "run basic -p monitor.pid=abc", file: None, expect: &["monitor.pid", "'abc'"] },
    Case { args: "run basic -p monitor.pid=4294967290", file: None, expect: &["monitor.pid", "no process"] },
    Case { args: "run basic -p steadystate.tolerance=0", file: None, expect: &["steadystate.tolerance"] },
    Case { args: "run basic -p timeseries.file=/nonexistent/dir/ts.csv", file: None, expect: &["timeseries.file", "/nonexistent/dir/ts.csv"] },
    Case { args: "bench --db-engine memory --num=ten", file: None, expect: &["--num", "'ten'"] },
    Case { args: "bench --db-engine memory --benchmarks=fillseq,bogus", file: None, expect: &["--benchmarks", "'bogus'"] },
    Case { args: "bench --db-engine memory --frobnicate", file: None, expect: &["unknown flag '--frobnicate'"] },
    Case { args: "bench --db-engine nosuchdb", file: None, expect: &["unknown store 'nosuchdb'"] },
    Case { args: "bench --db-engine memory --threads=0", file: None, expect: &["--threads", "at least 1"] },
    Case { args: "bench --db-engine memory --histogram=maybe", file: None, expect: &["--histogram", "'maybe'"] },
    Case { args: "bench --db-engine memory --compression_ratio=0", file: None, expect: &["--compression_ratio"] },
    Case { args: "bench --db-engine leveldb --db={dir}/db --compression_type=xpress", file: None, expect: &["leveldb.compression", "'xpress'", "--compression_type flag"] },
    Case { args: "bench --db-engine leveldb --db={dir}/db --cache_size=big", file: None, expect: &["leveldb.cache_size", "'big'", "--cache_size flag"] },
    // Issue 5 (multi-client runs, merge, charts).
    Case { args: "run basic -p client.count=0", file: None, expect: &["client.count", "'0'", "at least 1"] },
    Case { args: "run basic -p client.count=2 -p client.index=5", file: None, expect: &["client.index", "'5'", "below client.count (2)"] },
    Case { args: "run basic -p hdrhistogram.fileoutput=yes", file: None, expect: &["hdrhistogram.fileoutput", "'yes'"] },
    Case { args: "merge", file: None, expect: &["no input files"] },
    Case { args: "merge -o", file: None, expect: &["-o needs a file name"] },
    Case { args: "merge {dir}/bad.properties", file: Some("not json\n"), expect: &["bad.properties", "not JSON", "exporter=json"] },
    Case { args: "merge {dir}/bad.properties", file: Some("{\"metadata\": {\"tool\": \"ycsb\", \"version\": \"0\", \"git_revision\": null, \"host\": null, \"start_time\": \"\", \"command_line\": []}, \"config\": [], \"phases\": [{\"phase\": \"run\", \"runtime_ms\": 0, \"runtime_ns\": 1, \"operations\": 1, \"throughput\": 0.0, \"sections\": [{\"name\": \"READ\", \"operation\": \"READ\", \"intended\": false, \"operations\": 1, \"average_us\": 0.0, \"min_us\": 0, \"max_us\": 0, \"average_ns\": 1.0, \"min_ns\": 1, \"max_ns\": 1, \"percentiles\": [], \"returns\": []}]}]}"), expect: &["bad.properties", "phases[0].sections[0].histogram is missing"] },
    Case { args: "merge {dir}/bad.properties", file: Some("{\"schema_version\": 99, \"metadata\": {\"tool\": \"ycsb\", \"version\": \"0\", \"git_revision\": null, \"host\": null, \"start_time\": \"\", \"command_line\": []}, \"config\": [], \"phases\": [{\"phase\": \"run\", \"runtime_ms\": 0, \"runtime_ns\": 1, \"operations\": 1, \"throughput\": 0.0, \"sections\": [{\"name\": \"READ\", \"operation\": \"READ\", \"intended\": false, \"operations\": 1, \"average_us\": 0.0, \"min_us\": 0, \"max_us\": 0, \"average_ns\": 1.0, \"min_ns\": 1, \"max_ns\": 1, \"percentiles\": [], \"returns\": []}]}]}"), expect: &["bad.properties", "schema version 99", "reads up to version 1"] },
    Case { args: "merge -o {dir}/m.hdr {dir}/bad.hdr", file: None, expect: &["bad.hdr"] },
    Case { args: "report", file: None, expect: &["no export given"] },
    Case { args: "report {dir}/bad.properties", file: Some("{}"), expect: &["-o <file> is required"] },
    Case { args: "report {dir}/bad.properties -o {dir}/x.png", file: Some("{}"), expect: &["x.png", ".html or .svg"] },
    Case { args: "report {dir}/bad.properties -o {dir}/x.html", file: Some("{}"), expect: &["bad.properties", "not a ycsb JSON export"] },
    Case { args: "load basic -p datafile=crates/ycsb-cli/tests/data/bad.tsv", file: None, expect: &["bad.tsv:3", "2 columns, expected 3"] },
    Case { args: "load basic -p datafile=/nonexistent/rows.tsv", file: None, expect: &["/nonexistent/rows.tsv"] },
    Case { args: "load basic -p datafile=crates/ycsb-cli/tests/data/bsd.csv -p keyfield=title", file: None, expect: &["bsd.csv", "keyfield 'title' is not a column"] },
    Case { args: "load basic -p datafile=crates/ycsb-cli/tests/data/bsd.csv -p delimiter=;;", file: None, expect: &["delimiter", "';;'"] },
    Case { args: "load basic -p datafile=crates/ycsb-cli/tests/data/bsd.csv -p dataformat=xml", file: None, expect: &["dataformat", "'xml'"] },
    Case { args: "run basic -p keyfile=/nonexistent/keys", file: None, expect: &["/nonexistent/keys"] },
    // Issue 35 item 8: a misspelt store, flag or command is answered with the
    // nearest known one, by the rule unknown properties are answered with.
    Case { args: "load rockdb", file: None, expect: &["unknown store 'rockdb'", "did you mean 'rocksdb'?"] },
    Case { args: "-run -db memroy", file: None, expect: &["unknown store 'memroy'", "did you mean 'memory'?"] },
    Case { args: "serve levldb", file: None, expect: &["unknown store 'levldb'", "did you mean 'leveldb'?"] },
    Case { args: "shell memroy", file: None, expect: &["unknown store 'memroy'", "did you mean 'memory'?"] },
    Case { args: "bench --db-engine rockdb", file: None, expect: &["unknown store 'rockdb'", "did you mean 'rocksdb'?"] },
    Case { args: "run basic -threds 2", file: None, expect: &["unknown flag '-threds'; did you mean '-threads'? (see 'ycsb run --help')"] },
    Case { args: "load basic --targte 100", file: None, expect: &["unknown flag '--targte'; did you mean '--target'? (see 'ycsb load --help')"] },
    Case { args: "-lod -db basic", file: None, expect: &["unknown flag '-lod'; did you mean '-load'?"] },
    Case { args: "shell memory -tabel t", file: None, expect: &["unknown flag '-tabel'; did you mean '-table'? (see 'ycsb shell --help')"] },
    Case { args: "serve memory --htp off", file: None, expect: &["unknown flag '--htp'; did you mean '--http'? (see 'ycsb serve --help')"] },
    Case { args: "report {dir}/a.json --titel x", file: None, expect: &["unknown flag '--titel'; did you mean '--title'? (see 'ycsb report --help')"] },
    Case { args: "merge --forse {dir}/a.json", file: None, expect: &["unknown flag '--forse'; did you mean '--force'? (see 'ycsb merge --help')"] },
    Case { args: "properties --markdwn", file: None, expect: &["unknown flag '--markdwn'; did you mean '--markdown'?"] },
    Case { args: "run basic -x", file: None, expect: &["unknown flag '-x' (see 'ycsb run --help')"] },
    Case { args: "help repot", file: None, expect: &["'ycsb help repot'", "did you mean 'report'?"] },
    // Issue 17 item 7: extreme values are bad input, not panics or aborts.
    Case { args: "run basic -p maxexecutiontime=18446744073709551615", file: None, expect: &["maxexecutiontime", "'18446744073709551615'", "-p flag", "at most 4294967295"] },
    Case { args: "run basic -p status.interval=1e300", file: None, expect: &["status.interval", "'1e300'", "at most 4294967295"] },
    Case { args: "run basic -p timeseries.granularity=1e300", file: None, expect: &["timeseries.granularity", "'1e300'"] },
    Case { args: "load basic -p fieldlength=100000000000", file: None, expect: &["fieldlength", "'100000000000'", "maximum record size"] },
    Case { args: "load basic -p fieldcount=4294967296", file: None, expect: &["fieldcount", "'4294967296'", "at most 1048576"] },
    Case { args: "load basic -p fieldcount=100000 -p fieldlength=100000", file: None, expect: &["fieldcount=100000 (-p flag)", "fieldlength=100000 (-p flag)", "maximum record size"] },
    Case { args: "load basic -p fieldcount=1000000", file: None, expect: &["fieldcount", "'1000000'", "maximum record size"] },
    Case { args: "load basic -p fieldlengthdistribution=uniform -p fieldlength=100000000", file: None, expect: &["fieldlength", "maximum record size"] },
    Case { args: "bench --db-engine memory --threads=100000", file: None, expect: &["--threads", "at most 4096"] },
    Case { args: "bench --db-engine memory --stats_interval_seconds=18446744073709551615", file: None, expect: &["--stats_interval_seconds", "at most 4294967295"] },
    // Issue 35 item 8: ycsb bench's flags and benchmarks get did-you-mean.
    Case { args: "bench --db-engine memory --threds=2", file: None, expect: &["unknown flag '--threds'", "did you mean '--threads'?"] },
    Case { args: "bench --db-engine memory -benchmark=fillseq", file: None, expect: &["unknown flag '--benchmark'", "did you mean '--benchmarks'?"] },
    Case { args: "bench --db-engine memory --benchmarks=filseq", file: None, expect: &["unknown benchmark 'filseq'", "did you mean 'fillseq'?"] },
    // Issue 35 item 7: go-ycsb's outputstyle.
    Case { args: "run basic -p outputstyle=fancy", file: None, expect: &["outputstyle", "'fancy'", "-p flag"] },
    Case { args: "run basic -p measurement.output_style=json -p exporter=json", file: None, expect: &["measurement.output_style=json (-p flag)", "exporter=json (-p flag)", "exportfile"] },
    Case { args: "run memory -p recordcount=10 -p insertcount=0 -p requestdistribution=zipfian", file: None, expect: &["insertcount", "'0'", "-p flag", "never loaded"] },
    Case { args: "run memory -p recordcount=10 -p insertcount=0 -p requestdistribution=latest", file: None, expect: &["insertcount", "'0'", "never loaded"] },
    Case { args: "run memory -P workloads/workloade -p recordcount=10 -p insertstart=10", file: None, expect: &["insertstart", "'10'", "never loaded"] },
    Case { args: "run memory -p recordcount=10 -p insertstart=10 -p requestdistribution=uniform", file: None, expect: &["insertstart", "'10'", "never loaded"] },
    Case { args: "-load -run -db memory -p recordcount=10 -p insertcount=0 -p requestdistribution=exponential", file: None, expect: &["insertcount", "'0'", "never loaded"] },
    Case { args: "run memory -p recordcount=10 -p insertcount=0", file: None, expect: &["insertcount", "'0'", "-p flag", "never loaded"] },
    Case { args: "run memory -p recordcount=10 -p insertstart=10", file: None, expect: &["insertstart", "'10'", "never loaded"] },
    // Issue 17 item 13: --use_existing_db on a database that is not there.
    Case { args: "bench --db-engine leveldb --db={dir}/nodb --use_existing_db=1 --benchmarks=readrandom", file: None, expect: &["--use_existing_db", "nodb", "leveldb.dbname, --db flag", "does not exist"] },
    Case { args: "bench --db-engine rocksdb --db={dir}/nodb --use_existing_db=1 --benchmarks=readrandom", file: None, expect: &["--use_existing_db", "nodb", "rocksdb.dbname, --db flag", "does not exist"] },
    // Issue 17 item 10: a merge written in the other format.
    Case { args: "merge -o {dir}/x.hdr {dir}/bad.properties", file: Some("{}"), expect: &["x.hdr", "name it <merged>.json"] },
    Case { args: "merge -o {dir}/x.json {dir}/a.hdr {dir}/b.hdr", file: None, expect: &["x.json", "name it <merged>.hdr"] },
    // Issue 8: the latency clock.
    Case { args: "run basic -p measurement.clock=rdtsc", file: None, expect: &["measurement.clock", "'rdtsc'", "auto, std, off"] },
    // Issue 17 (reliability) item 2: inputs are regular files read with
    // limits: a device is not read until memory runs out, a FIFO ({dir}/fifo,
    // {dir}/fifo.hdr: no writer ever opens them) does not hang.
    Case { args: "load basic -P /dev/zero", file: None, expect: &["/dev/zero", "character device, not a regular file"] },
    Case { args: "load basic -P {dir}/fifo", file: None, expect: &["property file", "fifo", "a FIFO, not a regular file"] },
    Case { args: "merge {dir}/fifo", file: None, expect: &["merge", "fifo", "a FIFO"] },
    Case { args: "merge /dev/zero", file: None, expect: &["merge", "/dev/zero", "not a regular file"] },
    Case { args: "merge -o {dir}/m.hdr {dir}/fifo.hdr", file: None, expect: &["merge", "fifo.hdr", "a FIFO"] },
    Case { args: "report {dir}/fifo -o {dir}/x.html", file: None, expect: &["report", "fifo", "a FIFO"] },
    Case { args: "load basic -p datafile={dir}/fifo", file: None, expect: &["fifo", "a FIFO"] },
    Case { args: "load basic -p datafile=/dev/zero", file: None, expect: &["/dev/zero", "not a regular file"] },
    Case { args: "run basic -p keyfile={dir}/fifo", file: None, expect: &["fifo", "a FIFO"] },
    Case { args: "load basic -p fieldlengthdistribution=histogram -p fieldlengthhistogram={dir}/fifo", file: None, expect: &["fieldlengthhistogram", "fifo", "a FIFO"] },
    Case { args: "load basic -p fieldlengthdistribution=histogram -p fieldlengthhistogram=/dev/zero", file: None, expect: &["fieldlengthhistogram", "/dev/zero", "not a regular file"] },
    Case { args: "load rocksdb -p rocksdb.dbname={dir}/rdb -p rocksdb.optionsfile={dir}/fifo", file: None, expect: &["rocksdb.optionsfile", "fifo", "a FIFO"] },
    // Item 1: outputs go only where their directory exists (never created
    // silently), checked before anything runs or is read.
    Case { args: "merge -o {dir}/nodir/m.json {dir}/bad.properties", file: Some("{}"), expect: &["merge", "-o", "nodir", "does not exist"] },
    Case { args: "merge -o {dir}/nodir/m.hdr {dir}/a.hdr", file: None, expect: &["merge", "nodir", "does not exist"] },
    Case { args: "report {dir}/bad.properties -o {dir}/nodir/x.html", file: Some("{}"), expect: &["report", "-o", "nodir", "does not exist"] },
    Case { args: "run basic -p hdrhistogram.fileoutput=true -p hdrhistogram.output.path={dir}/nodir/", file: None, expect: &["hdrhistogram.output.path", "nodir", "does not exist", "-p flag"] },
    Case { args: "run basic -p hdrhistogram.fileoutput=true -p hdrhistogram.output.path={dir}/bad.properties/", file: Some("x=1\n"), expect: &["hdrhistogram.output.path", "bad.properties is not a directory"] },
    Case { args: "run basic -p exportfile={dir}/bad.properties/out.json", file: Some("x=1\n"), expect: &["exportfile", "bad.properties is not a directory", "-p flag"] },
    // Issue 33 item 2: outputs never land on inputs, in the database or on
    // each other.
    Case { args: "run basic -P {dir}/bad.properties -p exportfile={dir}/bad.properties", file: Some("recordcount=5\n"), expect: &["exportfile", "bad.properties (read with -P)", "-p flag", "never replaces an input"] },
    Case { args: "run basic -p exportfile={dir}/x.json -p timeseries.file={dir}/./x.json", file: None, expect: &["timeseries.file", "exportfile", "a file of its own"] },
    Case { args: "merge -o {dir}/bad.properties {dir}/bad.properties", file: Some("{}"), expect: &["merge: -o", "the input", "bad.properties"] },
    Case { args: "load sqlite -p sqlite.dbpath={dir} -p exportfile={dir}/out.json", file: None, expect: &["exportfile", "inside the sqlite database directory", "sqlite.dbpath, -p flag"] },
    // Item 11: a warning earned before the store refuses its properties
    // (an unknown property, a file overriding a flag) is not printed.
    Case { args: "load leveldb -p leveldb.nosuch=1", file: None, expect: &["leveldb.dbname", "required"] },
    Case { args: "load fjall -p recordcount=5 -P {dir}/bad.properties", file: Some("recordcount=6\n"), expect: &["fjall.dir", "required"] },
    Case { args: "shell leveldb -p leveldb.nosuch=1", file: None, expect: &["leveldb.dbname", "required"] },
    Case { args: "serve leveldb -p leveldb.nosuch=1", file: None, expect: &["leveldb.dbname", "required"] },
    // Issue 18: the fjall and redb stores.
    Case { args: "load fjall", file: None, expect: &["fjall.dir", "required"] },
    Case { args: "load redb", file: None, expect: &["redb.path", "required"] },
    Case { args: "load fjall -p fjall.dir={dir}/db -p fjall.fsync=maybe", file: None, expect: &["fjall.fsync", "'maybe'", "-p flag"] },
    Case { args: "load fjall -p fjall.dir={dir}/db -p fjall.memtable_size=100", file: None, expect: &["fjall.memtable_size", "'100'", "at least 65536"] },
    Case { args: "load redb -p redb.path={dir}/db -p redb.durability=eventual", file: None, expect: &["redb.durability", "'eventual'", "immediate, none"] },
    Case { args: "load redb -p redb.path={dir}/db -p redb.cache_size=1GB", file: None, expect: &["redb.cache_size", "'1GB'"] },
    Case { args: "bench --db-engine fjall --db={dir}/db --compression_type=zstd", file: None, expect: &["fjall.compression", "'zstd'", "--compression_type flag"] },
    Case { args: "bench --db-engine redb --db={dir}/db --cache_size=big", file: None, expect: &["redb.cache_size", "'big'", "--cache_size flag"] },
    // Issue 35 item 6: db_bench's run-control and mixgraph flags.
    Case { args: "bench --db-engine memory --duration=soon", file: None, expect: &["--duration", "'soon'"] },
    Case { args: "bench --db-engine memory --benchmark_write_rate_limit=-1", file: None, expect: &["--benchmark_write_rate_limit", "'-1'"] },
    Case { args: "bench --db-engine memory --readwritepercent=150", file: None, expect: &["--readwritepercent", "0..=100"] },
    Case { args: "bench --db-engine memory --benchmarks=mixgraph --mix_get_ratio=0", file: None, expect: &["--mix_get_ratio", "must not all be 0"] },
    Case { args: "bench --db-engine memory --keyrange_num=0", file: None, expect: &["--keyrange_num", "at least 1"] },
    Case { args: "bench --db-engine memory --sine_mix_rate_noise=3", file: None, expect: &["--sine_mix_rate_noise", "0..=1"] },
    Case { args: "bench --db-engine memory --value_sigma=wide", file: None, expect: &["--value_sigma", "'wide'"] },
    Case { args: "bench --db-engine memory --batch_size=0", file: None, expect: &["--batch_size", "at least 1"] },
    // Issue 33 item 3: settings that silently break the data are refused.
    Case { args: "load wiredtiger -p wiredtiger.home={dir}/wt -p wiredtiger.table_config=key_format=S", file: None, expect: &["wiredtiger.table_config", "'key_format=S'", "-p flag", "sets key_format"] },
    Case { args: "load wiredtiger -p wiredtiger.home={dir}/wt -p wiredtiger.log=true -p wiredtiger.config=log=(file_max=1GB)", file: None, expect: &["wiredtiger.config", "-p flag", "wiredtiger.log"] },
    Case { args: "load rocksdb -p rocksdb.dbname={dir}/rdb -p rocksdb.optionsfile={dir}/bad.properties", file: Some("[CFOptions \"default\"]\n  comparator=rocksdb.ReverseBytewiseComparator\n"), expect: &["rocksdb.optionsfile", "-p flag", "line 2 sets comparator"] },
    // Issue 33 item 5: values the engine cannot take are named, not a
    // panic (rusqlite), an abort (thread spawns) or an engine's unnamed error.
    Case { args: "load sqlite -p sqlite.dbpath={dir}/db -p sqlite.busy_timeout=2147483648", file: None, expect: &["sqlite.busy_timeout", "'2147483648'", "-p flag", "expected 0 to 2147483647"] },
    Case { args: "load fjall -p fjall.dir={dir}/db -p fjall.worker_threads=100000", file: None, expect: &["fjall.worker_threads", "'100000'", "expected 0 to 256"] },
    Case { args: "load rocksdb -p rocksdb.dbname={dir}/rdb -p rocksdb.max_background_jobs=100000", file: None, expect: &["rocksdb.max_background_jobs", "'100000'", "expected 0 to 256"] },
    Case { args: "load wiredtiger -p wiredtiger.home={dir}/wt -p wiredtiger.cache_size=16TB", file: None, expect: &["wiredtiger.cache_size", "'16TB'", "expected 1048576 to 10995116277760"] },
    Case { args: "load leveldb -p leveldb.dbname={dir}/db -p leveldb.filter_bits=2147483647", file: None, expect: &["leveldb.filter_bits", "'2147483647'", "expected 0 to 1000"] },
    Case { args: "load lmdb -p lmdb.dbpath={dir}/db -p lmdb.mapsize=18446744073709551615", file: None, expect: &["lmdb.mapsize", "'18446744073709551615'", "expected -1 to 9223372036854775807"] },
    Case { args: "load etcd -p etcd.endpoints=https://127.0.0.1:1 -p etcd.cacert_file={dir}/fifo", file: None, expect: &["etcd.cacert_file", "fifo", "a FIFO, not a regular file"] },
    // Issue 33 item 13: the error names the count that was set.
    Case { args: "run basic -p recordcount=18446744073709551615 -p requestdistribution=zipfian", file: None, expect: &["recordcount", "'18446744073709551615'", "-p flag", "2^64"] },
    // Issue 35 item 5: YCSB-cpp's rate limits.
    Case { args: "run basic -p limit.file={dir}/bad.properties", file: Some("1 100\n2 fast\n"), expect: &["limit.file", "bad.properties:2", "'fast'"] },
    Case { args: "run basic -p limit.file={dir}/bad.properties", file: Some("5 100\n3 200\n"), expect: &["limit.file", "bad.properties:2", "does not come after second 5"] },
    Case { args: "run basic -p limit.file={dir}/nonexistent", file: None, expect: &["limit.file", "nonexistent", "cannot read"] },
    Case { args: "run basic -p limit.ops=many", file: None, expect: &["limit.ops", "'many'", "-p flag"] },
    Case { args: "load leveldb -p leveldb.dbname={dir}/ldb -p leveldb.format=column", file: None, expect: &["leveldb.format", "'column'", "-p flag", "<field>:<key>", "NOT_IMPLEMENTED"] },
    Case { args: "load rocksdb -p rocksdb.dbname={dir}/rdb -p rocksdb.compaction_pri=5", file: None, expect: &["rocksdb.compaction_pri", "'5'", "kRoundRobin"] },
    Case { args: "load rocksdb -p rocksdb.dbname={dir}/rdb -p rocksdb.compaction_pri=kRoundRobin -p rocksdb.mergeupdate=true", file: None, expect: &["rocksdb.compaction_pri", "rocksdb.mergeupdate", "OPTIONS file"] },
    Case { args: "run basic -target 100 -p limit.ops=50", file: None, expect: &["target=100 (-target flag)", "limit.ops=50 (-p flag)", "set one of them"] },
];

#[test]
fn bad_inputs_exit_2_with_one_clear_line() {
    assert!(CASES.len() >= 40, "{} cases", CASES.len());
    let dir = tempfile::tempdir().unwrap();
    // FIFOs nobody writes: reading one would hang.
    let fifos = ["fifo", "fifo.hdr"].iter().all(|name| {
        std::process::Command::new("mkfifo")
            .arg(dir.path().join(name))
            .status()
            .is_ok_and(|s| s.success())
    });
    for case in CASES {
        if case.args.contains("{dir}/fifo") && !fifos {
            eprintln!("skipped `{}`: mkfifo failed", case.args);
            continue;
        }
        if let Some(text) = case.file {
            std::fs::write(dir.path().join("bad.properties"), text).unwrap();
        }
        let args = case
            .args
            .replace("{dir}", &dir.path().display().to_string());
        let o = run(&args);
        let err = stderr(&o);
        assert_eq!(
            o.status.code(),
            Some(2),
            "`{args}`: status {:?}, stderr: {err}",
            o.status
        );
        assert!(
            !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
            "`{args}`: {err}"
        );
        // Issue 33 item 11: the error is all of standard error: no
        // `Command line:` header before it, no usage or warning around it.
        let errors: Vec<&str> = err.lines().collect();
        assert!(
            errors.len() == 1 && errors[0].starts_with("ycsb: error: "),
            "`{args}`: expected one error line and nothing else on stderr, got: {err}"
        );
        for needle in case.expect {
            assert!(
                errors[0].contains(needle),
                "`{args}`: '{needle}' not in: {}",
                errors[0]
            );
        }
        assert!(
            stdout(&o).is_empty(),
            "`{args}`: wrote a report: {}",
            stdout(&o)
        );
    }
}

/// Issue 17, item 2: a property file beyond the 16 MiB limit is refused
/// before it is read (a sparse file: nothing is written to disk).
#[test]
fn a_huge_property_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.properties");
    std::fs::File::create(&path)
        .unwrap()
        .set_len(17 << 20)
        .unwrap();
    let o = run(&format!("load basic -P {}", path.display()));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("huge.properties") && err.contains("larger than 16777216 bytes"),
        "{err}"
    );
}

/// Issue 33 item 5: `ycsb bench --value_size` near its limit under a
/// memory limit (RLIMIT_AS, set by the shell) aborted when the value
/// buffers could not be allocated; it is bad input naming the flag.
#[test]
fn a_value_size_beyond_the_memory_limit_is_refused() {
    // prlimit(1) (util-linux) caps the address space at 2 GiB, as a
    // container's memory limit would, without a shell in between.
    let binary = ycsb().get_program().to_owned();
    let o = std::process::Command::new("prlimit")
        .arg(format!("--as={}", 2u64 << 30))
        .arg("--")
        .arg(binary)
        .args([
            "bench",
            "--db-engine",
            "memory",
            "--value_size=1073741824",
            "--num=1",
            "--benchmarks=fillseq",
        ])
        .current_dir(root())
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let error = one_error_line(&err);
    assert!(
        error.contains("--value_size") && error.contains("cannot allocate"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}
