//! Expansion of a matrix into cells: the cartesian product of the axes
//! times the repeats, each with a stable, readable directory name.

use std::collections::HashSet;
use std::path::PathBuf;

/// The axis of target rates.
pub(crate) const TARGET_AXIS: &str = "target";

use crate::matrix::{Db, Matrix};

/// Axes that are not `ycsb` properties.
pub const NOT_PROPERTIES: &[&str] = &["db", "workload", "memory_limit", "clients"];

/// One run of one combination of axis values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    /// Directory name: `db=<label>,fieldlength=32,r1`.
    pub id: String,
    /// The combination without the repeat: what repeats are grouped by.
    pub group: String,
    /// (axis, value given to ycsb, label) in axis order.
    pub coords: Vec<(String, String, String)>,
    /// 1-based repeat number.
    pub repeat: u32,
    /// The db entry.
    pub db: Db,
    /// With a shared load: the load cell's id, whose data this cell copies.
    pub load: Option<String>,
}

impl Cell {
    /// The label of an axis' value.
    pub fn label(&self, axis: &str) -> Option<&str> {
        self.coords
            .iter()
            .find(|(a, _, _)| a == axis)
            .map(|(_, _, l)| l.as_str())
    }

    /// The client's memory limit: the axis value, else the experiment's.
    pub fn memory_limit(&self, experiment: Option<u64>) -> Option<u64> {
        self.coords
            .iter()
            .find(|(a, _, _)| a == "memory_limit")
            .and_then(|(_, v, _)| crate::matrix::parse_size(v))
            .or(experiment)
    }

    /// How many `ycsb` processes run the cell together (the `clients`
    /// axis; 1 without it).
    pub fn clients(&self) -> u32 {
        self.coords
            .iter()
            .find(|(a, _, _)| a == "clients")
            .and_then(|(_, v, _)| v.parse().ok())
            .unwrap_or(1)
    }

    /// Workload property files (the `workload` axis) of this cell.
    pub fn workload_files(&self) -> Vec<PathBuf> {
        self.coords
            .iter()
            .filter(|(a, _, _)| a == "workload")
            .map(|(_, v, _)| PathBuf::from(v))
            .collect()
    }

    /// Properties set by axes (all but `db`, `workload`, `memory_limit`).
    pub fn axis_properties(&self) -> Vec<(String, String)> {
        self.coords
            .iter()
            .filter(|(a, _, _)| !NOT_PROPERTIES.contains(&a.as_str()))
            .map(|(a, v, _)| (a.clone(), v.clone()))
            .collect()
    }
}

fn name_of(coords: &[(String, String, String)]) -> String {
    coords
        .iter()
        .map(|(a, _, l)| format!("{a}={l}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Every cell of the matrix. Repeats are the outermost loop, so an
/// interrupted matrix already has one run of every combination.
pub fn expand(m: &Matrix) -> Vec<Cell> {
    let mut combos: Vec<Vec<(String, String, String)>> = vec![Vec::new()];
    for axis in &m.axes {
        let mut next = Vec::with_capacity(combos.len() * axis.values.len());
        for c in &combos {
            for v in &axis.values {
                let mut c = c.clone();
                c.push((axis.name.clone(), v.value.clone(), v.label.clone()));
                next.push(c);
            }
        }
        combos = next;
    }
    let mut cells = Vec::new();
    for repeat in 1..=m.repeats {
        for coords in &combos {
            let group = name_of(coords);
            let db_label = &coords
                .iter()
                .find(|(a, _, _)| a == "db")
                .map(|(_, _, l)| l.clone())
                .unwrap_or_default();
            let Some(db) = m.dbs.get(db_label) else {
                continue;
            };
            let load = (!m.reuse_load_across.is_empty()).then(|| load_id(m, coords, repeat));
            cells.push(Cell {
                id: format!("{group},r{repeat}"),
                group,
                coords: coords.clone(),
                repeat,
                db: db.clone(),
                load,
            });
        }
    }
    cells
}

/// The coordinates of the load a cell reuses: the shared axes at their
/// first value, but a shared `target` at 0: the runs of a target sweep
/// share data loaded as fast as possible, as Java's `ycsb load` without
/// `-target` would.
pub fn load_coords(
    m: &Matrix,
    coords: &[(String, String, String)],
) -> Vec<(String, String, String)> {
    coords
        .iter()
        .map(|(a, v, l)| {
            if a == TARGET_AXIS && m.reuse_load_across.contains(a) {
                (a.clone(), "0".into(), "0".into())
            } else if m.reuse_load_across.contains(a) {
                let first = m
                    .axes
                    .iter()
                    .find(|x| &x.name == a)
                    .and_then(|x| x.values.first());
                match first {
                    Some(f) => (a.clone(), f.value.clone(), f.label.clone()),
                    None => (a.clone(), v.clone(), l.clone()),
                }
            } else {
                (a.clone(), v.clone(), l.clone())
            }
        })
        .collect()
}

fn load_id(m: &Matrix, coords: &[(String, String, String)], repeat: u32) -> String {
    let shared: Vec<_> = load_coords(m, coords)
        .into_iter()
        .filter(|(a, _, _)| !m.reuse_load_across.contains(a))
        .collect();
    format!("load,{},r{repeat}", name_of(&shared))
}

/// The load cells of a matrix with `reuse_load_across`: one per distinct
/// load id, with the shared axes at their first value.
pub fn load_cells(m: &Matrix, cells: &[Cell]) -> Vec<Cell> {
    let mut out: Vec<Cell> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for c in cells {
        let Some(id) = &c.load else { continue };
        if !seen.insert(id) {
            continue;
        }
        let coords = load_coords(m, &c.coords);
        out.push(Cell {
            id: id.clone(),
            group: id
                .rsplit_once(",r")
                .map(|(g, _)| g.to_string())
                .unwrap_or_default(),
            coords,
            repeat: c.repeat,
            db: c.db.clone(),
            load: None,
        });
    }
    out
}
