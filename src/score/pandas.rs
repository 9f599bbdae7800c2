//! pandas' missing values: `read_csv` turns a field equal to one of these strings into NaN, and a
//! `dropna()` then drops the row. llm-tst-code evaluates its CSVs that way, so the pooled result
//! table (`table --pooled`) and `reproduce llm-tst` leave such rows out.

/// pandas' default missing-value strings (`na_values`), compared exactly (no trimming, case kept).
const NA: [&str; 19] = [
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL",
    "NaN", "None", "n/a", "nan", "null",
];

/// Whether pandas reads this field as missing.
pub fn is_na(field: &str) -> bool {
    NA.contains(&field)
}

#[cfg(test)]
mod tests {
    #[test]
    fn missing_values_are_exact_strings() {
        assert!(super::is_na("") && super::is_na("N/A") && super::is_na("null"));
        assert!(!super::is_na(" ") && !super::is_na("n/a ") && !super::is_na("none"));
    }
}
