//! The `[axes]` and `[db.<label>]` tables of a matrix: every axis and
//! value checked on its line, the db entries built from the registry's
//! descriptors.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Range;

use toml::Spanned;
use ycsb_db::{Protocol, StoreDescriptor};

use super::{
    axis_label, descriptor, label_of, parse_size, store_names, Axis, AxisValue, Ctx, Db, RawAxis,
    RawDb, RawMatrix, Server, MAX_CELLS, MAX_CLIENTS,
};
use crate::error::MatrixError;

/// The db entries of a matrix by label, as written.
type RawDbs<'a> = HashMap<&'a str, &'a Spanned<RawDb>>;

impl Ctx<'_> {
    /// The axes in file order, and the db entries of the db axis.
    pub(super) fn axes(
        &self,
        raw: &RawMatrix,
        repeats: u32,
    ) -> Result<(Vec<Axis>, BTreeMap<String, Db>), MatrixError> {
        let mut raw_axes: Vec<_> = raw.axes.get_ref().iter().collect();
        raw_axes.sort_by_key(|(k, _)| k.span().start);
        if !raw_axes.iter().any(|(k, _)| k.get_ref() == "db") {
            return self.err(
                raw.axes.span(),
                format!(
                    "axes: no 'db' axis (list the stores to compare, some of: {})",
                    store_names(|_| true)
                ),
            );
        }
        // Before any value is looked at: a typo of a size must cost no time.
        let cells = raw_axes.iter().fold(u64::from(repeats), |n, (_, values)| {
            n.saturating_mul(values.get_ref().len() as u64)
        });
        if cells > MAX_CELLS {
            return self.err(
                raw.axes.span(),
                format!("the matrix has {cells} cells (axes times repeats): at most {MAX_CELLS}"),
            );
        }
        let raw_dbs: RawDbs<'_> = raw
            .db
            .iter()
            .map(|(k, d)| (k.get_ref().as_str(), d))
            .collect();
        let mut axes = Vec::new();
        let mut dbs = BTreeMap::new();
        for (key, values) in raw_axes {
            axes.push(self.axis(key, values, &raw_dbs, &mut dbs)?);
        }
        for (k, d) in &raw.db {
            if !dbs.contains_key(k.get_ref()) {
                // A table nobody uses is most likely a misspelt axis value.
                return self.err(
                    d.span(),
                    format!("[db.{}] is not on the db axis", k.get_ref()),
                );
            }
        }
        Ok((axes, dbs))
    }

    /// One axis, its values in file order, each label once; the db
    /// axis' entries go into `dbs`.
    fn axis(
        &self,
        key: &Spanned<String>,
        values: &RawAxis,
        raw_dbs: &RawDbs<'_>,
        dbs: &mut BTreeMap<String, Db>,
    ) -> Result<Axis, MatrixError> {
        let name = key.get_ref().clone();
        // Part of every cell's directory name: `<axis>=<label>`.
        if label_of(&name) != name {
            return self.err(
                key.span(),
                format!("axes.{name}: an axis name is part of cell directory names: use letters, digits, '.', '_', '-' or '+'"),
            );
        }
        self.dir_name(key.span(), "axis", &name)?;
        if values.get_ref().is_empty() {
            return self.err(
                values.span(),
                format!("axes.{name} is empty: give at least one value"),
            );
        }
        let mut out: Vec<AxisValue> = Vec::with_capacity(values.get_ref().len());
        // Labels seen: a set, so that a long axis is checked in linear time.
        let mut labels: HashSet<String> = HashSet::with_capacity(values.get_ref().len());
        for v in values.get_ref() {
            let value = self.axis_value(&name, v, out.len(), raw_dbs, dbs)?;
            if !labels.insert(value.label.clone()) {
                let message = if name == "workload" {
                    let stem = std::path::Path::new(&value.value)
                        .file_stem()
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    format!("axes.workload: two files named '{stem}'; cell names would clash")
                } else {
                    format!("axes.{name}: value '{}' listed twice", value.value)
                };
                return self.err(v.span(), message);
            }
            out.push(value);
        }
        Ok(Axis { name, values: out })
    }

    /// Value number `index` of axis `name`, checked as its axis wants:
    /// a workload file, a db (its entry put in `dbs`), a number of
    /// clients, a target rate, a size; any other axis sets a property.
    fn axis_value(
        &self,
        name: &str,
        v: &Spanned<toml::Value>,
        index: usize,
        raw_dbs: &RawDbs<'_>,
        dbs: &mut BTreeMap<String, Db>,
    ) -> Result<AxisValue, MatrixError> {
        let value = self.scalar(v, &format!("axes.{name}"))?;
        let label = match name {
            "workload" => {
                let path = self.file(&Spanned::new(v.span(), value.clone()), "workload file")?;
                let stem = path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                return Ok(AxisValue {
                    value: path.display().to_string(),
                    label: label_of(&stem),
                });
            }
            "db" => {
                let db = self.db_value(v.span(), &value, raw_dbs)?;
                dbs.insert(value.clone(), db);
                value.clone()
            }
            "clients" => {
                if !value
                    .parse::<u32>()
                    .is_ok_and(|n| (1..=MAX_CLIENTS).contains(&n))
                {
                    return self.err(
                        v.span(),
                        format!(
                            "axes.clients '{value}': expected a number of ycsb processes from 1 to {MAX_CLIENTS}"
                        ),
                    );
                }
                label_of(&value)
            }
            crate::cells::TARGET_AXIS => {
                if !value
                    .trim()
                    .parse::<f64>()
                    .is_ok_and(|t| t.is_finite() && t >= 0.0)
                {
                    return self.err(
                        v.span(),
                        format!(
                            "axes.target '{value}': expected a rate in operations per second, 0 or more (0: unthrottled)"
                        ),
                    );
                }
                label_of(&value)
            }
            "memory_limit" => {
                if parse_size(&value).is_none() {
                    return self.err(
                        v.span(),
                        format!("axes.memory_limit '{value}': expected a size such as 512M or 2G"),
                    );
                }
                label_of(&value)
            }
            _ => axis_label(name, &value, index),
        };
        Ok(AxisValue { value, label })
    }

    /// The db a value of the db axis names: its `[db.<label>]` entry, or
    /// else the store of that name with nothing set.
    fn db_value(
        &self,
        span: Range<usize>,
        label: &str,
        raw_dbs: &RawDbs<'_>,
    ) -> Result<Db, MatrixError> {
        if label_of(label) != label || label.is_empty() {
            return self.err(
                span,
                format!("axes.db '{label}': use letters, digits, '.', '_', '-' or '+'"),
            );
        }
        self.dir_name(span.clone(), "axes.db", label)?;
        if let Some(d) = raw_dbs.get(label) {
            return self.build_db(label, d.get_ref(), d.span());
        }
        match descriptor(label) {
            Some(store) => Ok(Db {
                label: label.to_string(),
                store: store.name.to_string(),
                property_files: Vec::new(),
                properties: Vec::new(),
                server: None,
            }),
            None => self.err(
                span,
                format!(
                    "axes.db: unknown db '{label}': not a store ({}) and no [db.{label}] table",
                    store_names(|_| true)
                ),
            ),
        }
    }

    /// A `clients` axis with more than one client needs server dbs, and
    /// sets `client.count` and `client.index` itself.
    pub(super) fn check_clients(
        &self,
        raw_axes: &Spanned<BTreeMap<Spanned<String>, RawAxis>>,
        axes: &[Axis],
        dbs: &BTreeMap<String, Db>,
        properties: &[(String, String)],
    ) -> Result<(), MatrixError> {
        let Some(clients) = axes.iter().find(|a| a.name == "clients") else {
            return Ok(());
        };
        let clients_span = raw_axes
            .get_ref()
            .iter()
            .find(|(k, _)| k.get_ref() == "clients")
            .map_or_else(|| raw_axes.span(), |(k, _)| k.span());
        let many = clients.values.iter().any(|v| v.value != "1");
        // Several processes share one data set only through a server.
        if let Some(db) = dbs
            .values()
            .find(|d| many && descriptor(&d.store).is_some_and(|x| x.server.is_none()))
        {
            return self.err(
                clients_span,
                format!(
                    "axes.clients: db '{}' is embedded in each ycsb process; several clients need a server db (a client store such as {} with server = \"redis-server\" or \"ycsb-serve\")",
                    db.label,
                    store_names(|s| s.server.is_some())
                ),
            );
        }
        if let Some((k, _)) = properties
            .iter()
            .find(|(k, _)| k == "client.count" || k == "client.index")
        {
            return self.err(
                clients_span,
                format!("axes.clients sets {k} for each client; remove it from [properties]"),
            );
        }
        Ok(())
    }
}

/// The `[db.<label>]` tables.
impl Ctx<'_> {
    /// The db of a `[db.<label>]` table: its client store, the server it
    /// talks to, its files and properties.
    fn build_db(&self, label: &str, d: &RawDb, span: Range<usize>) -> Result<Db, MatrixError> {
        let client = self.client_store(label, d, span.clone())?;
        let server = self.db_server(label, d, client)?;
        if server.is_none()
            && (!d.engine_property_files.is_empty() || !d.engine_properties.is_empty())
        {
            return self.err(span, format!("db.{label}: engine_property_files and engine_properties need server = \"ycsb-serve\""));
        }
        Ok(Db {
            label: label.to_string(),
            store: client.name.to_string(),
            property_files: self.files(&d.property_files, "property file")?,
            properties: self.properties(&d.properties)?,
            server,
        })
    }

    /// The store a db entry runs: `store`, or the store its label names.
    fn client_store(
        &self,
        label: &str,
        d: &RawDb,
        span: Range<usize>,
    ) -> Result<&'static StoreDescriptor, MatrixError> {
        match &d.store {
            Some(s) => match descriptor(s.get_ref()) {
                Some(found) => Ok(found),
                None => self.err(
                    s.span(),
                    format!(
                        "db.{label}.store: unknown store '{}' ({})",
                        s.get_ref(),
                        store_names(|_| true)
                    ),
                ),
            },
            None => match descriptor(label) {
                Some(found) => Ok(found),
                None => self.err(
                    span,
                    format!(
                        "[db.{label}]: '{label}' is not a store: set store = \"...\" ({})",
                        store_names(|_| true)
                    ),
                ),
            },
        }
    }

    /// The server a db entry's client store talks to, if it names one:
    /// `redis-server`, `memcached` or `ycsb-serve` with an engine, which only a client
    /// of the server's protocol can talk to.
    fn db_server(
        &self,
        label: &str,
        d: &RawDb,
        client: &StoreDescriptor,
    ) -> Result<Option<Server>, MatrixError> {
        let Some(s) = &d.server else {
            if let Some(e) = &d.engine {
                return self.err(
                    e.span(),
                    format!("db.{label}.engine needs server = \"ycsb-serve\""),
                );
            }
            return Ok(None);
        };
        let store = client.name;
        let Some(protocol) = client.server.map(|c| c.protocol) else {
            return self.err(
                s.span(),
                format!(
                    "db.{label}.server: the client store must be a client of a server ({}) to talk to one, not '{store}'",
                    store_names(|s| s.server.is_some())
                ),
            );
        };
        match s.get_ref().as_str() {
            "redis-server" => {
                if protocol != Protocol::Resp {
                    return self.err(
                        s.span(),
                        format!(
                            "db.{label}.server: redis-server speaks RESP, which '{store}' does not (RESP clients: {})",
                            store_names(|s| s.server.is_some_and(|c| c.protocol == Protocol::Resp))
                        ),
                    );
                }
                if let Some(e) = &d.engine {
                    return self.err(
                        e.span(),
                        format!("db.{label}.engine is only for server = \"ycsb-serve\""),
                    );
                }
                Ok(Some(Server::Redis))
            }
            "memcached" => {
                if protocol != Protocol::Memcached {
                    return self.err(
                        s.span(),
                        format!(
                            "db.{label}.server: memcached speaks its own protocol, which '{store}' does not (its clients: {})",
                            store_names(|s| s.server.is_some_and(|c| c.protocol == Protocol::Memcached))
                        ),
                    );
                }
                if let Some(e) = &d.engine {
                    return self.err(
                        e.span(),
                        format!("db.{label}.engine is only for server = \"ycsb-serve\""),
                    );
                }
                Ok(Some(Server::Memcached))
            }
            name @ ("postgres" | "mariadb") => {
                if client.server.and_then(|c| c.properties_for(name)).is_none() {
                    return self.err(
                        s.span(),
                        format!(
                            "db.{label}.server: the runner cannot point '{store}' at {name} (its clients: {})",
                            store_names(|s| s.server.is_some_and(|c| c.properties_for(name).is_some()))
                        ),
                    );
                }
                if let Some(e) = &d.engine {
                    return self.err(
                        e.span(),
                        format!("db.{label}.engine is only for server = \"ycsb-serve\""),
                    );
                }
                Ok(Some(if name == "postgres" {
                    Server::Postgres
                } else {
                    Server::MariaDb
                }))
            }
            "ycsb-serve" => {
                if !protocol.served_by_ycsb_serve() {
                    return self.err(
                        s.span(),
                        format!(
                            "db.{label}.server: ycsb serve speaks RESP and HTTP, not the protocol of '{store}' (its clients: {})",
                            store_names(|s| s.server.is_some_and(|c| c.protocol.served_by_ycsb_serve()))
                        ),
                    );
                }
                self.served_engine(label, d, s.span()).map(Some)
            }
            other => {
                let known = "redis-server, memcached, postgres, mariadb or ycsb-serve";
                self.err(
                    s.span(),
                    format!("db.{label}.server: unknown server '{other}' ({known})"),
                )
            }
        }
    }

    /// `ycsb serve` and the embedded engine it serves, with that
    /// engine's files and properties.
    fn served_engine(
        &self,
        label: &str,
        d: &RawDb,
        server_span: Range<usize>,
    ) -> Result<Server, MatrixError> {
        let embedded = || store_names(StoreDescriptor::is_embedded);
        let Some(engine) = &d.engine else {
            return self.err(
                server_span,
                format!(
                    "db.{label}: server = \"ycsb-serve\" needs engine = one of {}",
                    embedded()
                ),
            );
        };
        let Some(served) = descriptor(engine.get_ref()).filter(|e| e.is_embedded()) else {
            return self.err(
                engine.span(),
                format!(
                    "db.{label}.engine '{}': ycsb serve embeds {}",
                    engine.get_ref(),
                    embedded()
                ),
            );
        };
        Ok(Server::YcsbServe {
            engine: served.name.to_string(),
            property_files: self.files(&d.engine_property_files, "property file")?,
            properties: self.properties(&d.engine_properties)?,
        })
    }
}
