//! Space and write amplification.

use crate::workload::CoreWorkload;

/// The estimated user bytes of one write: key, field names and values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UserBytes {
    /// Bytes of one insert: the key, every field name and every value at
    /// the mean field length.
    pub per_insert: f64,
    /// Bytes of one update (and of the write of a read-modify-write): the
    /// key and every field (`writeallfields=true`) or one field.
    pub per_update: f64,
}

/// How many keys are sampled for the mean key length.
const KEY_SAMPLES: u64 = 1000;

impl UserBytes {
    /// The estimate for `workload`. The mean key length comes from up to
    /// 1000 key names spread evenly over the data set's key numbers (hashed
    /// key names vary in length by a few digits).
    pub fn of(workload: &CoreWorkload) -> Self {
        let count = workload.record_count().max(1);
        let samples = KEY_SAMPLES.min(count);
        let key_bytes: f64 = (0..samples)
            .map(|i| workload.key_name(i * count / samples).len() as f64)
            .sum::<f64>()
            / samples as f64;
        let names = workload.field_names();
        let name_bytes: f64 = names.iter().map(|n| n.len() as f64).sum();
        let value = workload.mean_field_length();
        let fields = names.len() as f64;
        let per_insert = key_bytes + name_bytes + fields * value;
        let per_update = if workload.write_all_fields() {
            per_insert
        } else {
            key_bytes + name_bytes / fields.max(1.0) + value
        };
        Self {
            per_insert,
            per_update,
        }
    }

    /// The user bytes of `inserts` inserts and `updates` updates.
    pub fn written(&self, inserts: u64, updates: u64) -> f64 {
        inserts as f64 * self.per_insert + updates as f64 * self.per_update
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ycsb_db::Properties;
    use ycsb_results::Amplification;

    #[test]
    fn user_bytes_of_the_default_workload() {
        // 10 fields field0..field9 (6 bytes each) of 100 bytes; ordered keys
        // user0..user9 (5 bytes).
        let props = Properties::new()
            .with("recordcount", 10)
            .with("insertorder", "ordered");
        let w = CoreWorkload::from_properties(&props).unwrap();
        let u = UserBytes::of(&w);
        assert!((u.per_insert - (5.0 + 60.0 + 1000.0)).abs() < 1e-9, "{u:?}");
        assert!((u.per_update - (5.0 + 6.0 + 100.0)).abs() < 1e-9, "{u:?}");
        assert!((u.written(2, 1) - (2.0 * 1065.0 + 111.0)).abs() < 1e-9);
        let all = CoreWorkload::from_properties(&props.with("writeallfields", true)).unwrap();
        assert_eq!(
            UserBytes::of(&all).per_update,
            UserBytes::of(&all).per_insert
        );
    }

    #[test]
    fn uniform_field_lengths_average_their_bounds() {
        let props = Properties::new()
            .with("fieldlengthdistribution", "uniform")
            .with("minfieldlength", 10)
            .with("fieldlength", 30);
        let w = CoreWorkload::from_properties(&props).unwrap();
        assert_eq!(w.mean_field_length(), 20.0);
    }

    #[test]
    fn ratios() {
        let a = Amplification::new(1000.0, 500.0, Some(3000), Some(750)).unwrap();
        assert_eq!(a.write_amplification, Some(3.0));
        assert_eq!(a.space_amplification, Some(1.5));
        let b = Amplification::new(0.0, 500.0, None, Some(1000)).unwrap();
        assert_eq!(b.write_amplification, None);
        assert_eq!(b.space_amplification, Some(2.0));
        assert_eq!(Amplification::new(0.0, 0.0, Some(1), Some(1)), None);
    }
}
