//! Every result says whether its writes were synced: for each store the
//! registry has that declares the property deciding it, a load with the
//! descriptor's relaxed value and one with a durable value export
//! `metadata.durability` accordingly.

mod common;
mod rel_support;

use common::*;
use rel_support::*;

#[test]
fn the_export_says_whether_writes_were_synced() {
    let stores: Vec<_> = ycsb_stores::STORES
        .iter()
        // A client of a server needs its server: its own end-to-end test
        // checks the export (jdbc.rs).
        .filter(|d| d.durability.is_some() && d.data_dir.is_some())
        .collect();
    assert!(stores.len() >= 7, "{}", stores.len());
    for store in stores {
        let d = store.durability.unwrap();
        let dir_property = store.data_dir.unwrap().name;
        for (value, durable) in [(d.relaxed, false), (d.durable[0], true)] {
            let tmp = tempfile::tempdir().unwrap();
            let export = tmp.path().join("load.json");
            let o = ycsb()
                .args(["load", store.name, "-P", "workloads/workloada"])
                .args(["-p", "recordcount=10", "-p", "exporter=json"])
                .arg("-p")
                .arg(format!(
                    "{dir_property}={}",
                    tmp.path().join("db").display()
                ))
                .arg("-p")
                .arg(format!("{}={value}", d.property))
                .arg("-p")
                .arg(format!("exportfile={}", export.display()))
                .output()
                .unwrap();
            assert!(o.status.success(), "{}: {}", store.name, stderr(&o));
            let json = read_json(&export);
            let recorded = &json["metadata"]["durability"];
            assert_eq!(recorded["property"], d.property, "{}: {json}", store.name);
            assert_eq!(recorded["value"], value, "{}", store.name);
            assert_eq!(recorded["durable"], durable, "{}: {value}", store.name);
        }
    }
}
