//! Editing a ranking of the rows shown for one item: rows are the distinct outputs (identical
//! outputs share a row), labelled `1..=m` in display order. A ranking is a list of tie groups
//! of row indices, best first.

use crate::human::ordering::{Ordering, OrderingError};

pub type Groups = Vec<Vec<usize>>;

/// Every row on its own, in display order: what an unranked item shows.
pub fn initial(m: usize) -> Groups {
    (0..m).map(|r| vec![r]).collect()
}

/// The ranking stored values describe (lower is better, equal values tie); `None` unless every
/// row has a value.
pub fn from_values(values: &[Option<f64>]) -> Option<Groups> {
    let v: Vec<f64> = values.iter().copied().collect::<Option<Vec<f64>>>()?;
    if v.is_empty() || v.iter().any(|x| !x.is_finite()) {
        return None;
    }
    Some(Ordering::from_ranks(&v).groups().iter().map(|g| g.iter().map(|p| p - 1).collect()).collect())
}

/// Parses a typed ordering such as `3>1=2>4` of the row labels `1..=m`.
pub fn parse(text: &str, m: usize) -> Result<Groups, OrderingError> {
    let o = Ordering::parse(text, m)?;
    Ok(o.groups().iter().map(|g| g.iter().map(|p| p - 1).collect()).collect())
}

/// The ranking written with row labels, e.g. `3>1=2`.
pub fn format(groups: &Groups) -> String {
    groups
        .iter()
        .map(|g| g.iter().map(|r| (r + 1).to_string()).collect::<Vec<_>>().join("="))
        .collect::<Vec<_>>()
        .join(">")
}

/// Rows in shown order (best first).
pub fn flat(groups: &Groups) -> Vec<usize> {
    groups.iter().flatten().copied().collect()
}

fn find(groups: &Groups, row: usize) -> Option<usize> {
    groups.iter().position(|g| g.contains(&row))
}

/// Moves `row` one step up: out of its tie group (just above it), or above the group above.
pub fn move_up(groups: &mut Groups, row: usize) -> bool {
    let Some(g) = find(groups, row) else { return false };
    if groups[g].len() > 1 {
        groups[g].retain(|&r| r != row);
        groups.insert(g, vec![row]);
        true
    } else if g > 0 {
        groups.swap(g - 1, g);
        true
    } else {
        false
    }
}

/// Moves `row` one step down: out of its tie group (just below it), or below the group below.
pub fn move_down(groups: &mut Groups, row: usize) -> bool {
    let Some(g) = find(groups, row) else { return false };
    if groups[g].len() > 1 {
        groups[g].retain(|&r| r != row);
        groups.insert(g + 1, vec![row]);
        true
    } else if g + 1 < groups.len() {
        groups.swap(g, g + 1);
        true
    } else {
        false
    }
}

/// Ties `row` with the group above it; a row already tied with others leaves its group (just
/// below it) instead.
pub fn toggle_tie(groups: &mut Groups, row: usize) -> bool {
    let Some(g) = find(groups, row) else { return false };
    if groups[g].len() > 1 {
        groups[g].retain(|&r| r != row);
        groups.insert(g + 1, vec![row]);
        true
    } else if g > 0 {
        groups.remove(g);
        groups[g - 1].push(row);
        groups[g - 1].sort_unstable();
        true
    } else {
        false
    }
}

/// The rank of each row (index = row) when row `r` stands for `sizes[r]` tied systems: tied
/// systems share the mean of the places they span, so the ranks of all systems sum to
/// n(n+1)/2 (the average tie rule of `human::ordering`).
pub fn row_ranks(groups: &Groups, sizes: &[usize]) -> Vec<f64> {
    let mut ranks = vec![0.0; sizes.len()];
    let mut place = 1.0;
    for g in groups {
        let n: usize = g.iter().map(|&r| sizes[r]).sum();
        let rank = place + (n as f64 - 1.0) / 2.0;
        for &r in g {
            ranks[r] = rank;
        }
        place += n as f64;
    }
    ranks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_ties_and_ranks() {
        let mut g = initial(4);
        assert!(move_up(&mut g, 2));
        assert_eq!(format(&g), "1>3>2>4");
        assert!(toggle_tie(&mut g, 1));
        assert_eq!(format(&g), "1>2=3>4");
        assert_eq!(row_ranks(&g, &[1, 1, 1, 1]), [1.0, 2.5, 2.5, 4.0]);
        // Row 0 stands for two identical outputs: it spans places 1 and 2.
        assert_eq!(row_ranks(&g, &[2, 1, 1, 1]), [1.5, 3.5, 3.5, 5.0]);
        assert!(move_up(&mut g, 2));
        assert_eq!(format(&g), "1>3>2>4");
        assert!(!move_up(&mut initial(2), 0));
        assert!(move_down(&mut g, 0));
        assert_eq!(format(&g), "3>1>2>4");
        assert!(toggle_tie(&mut g, 0) && toggle_tie(&mut g, 0));
        assert_eq!(format(&g), "3>1>2>4");
        let back = from_values(&row_ranks(&g, &[1, 1, 1, 1]).into_iter().map(Some).collect::<Vec<_>>()).unwrap();
        assert_eq!(back, g);
        assert_eq!(from_values(&[Some(1.0), None]), None);
        assert_eq!(format(&parse("3>1=2>4", 4).unwrap()), "3>1=2>4");
        assert_eq!(flat(&parse("3>1=2>4", 4).unwrap()), [2, 0, 1, 3]);
        assert!(parse("3>1", 4).is_err());
    }
}
