//! Comparing two tables: cell equality (numeric tolerance, rounding,
//! optional coercion of numeric strings), the column mapping (by values,
//! names breaking ties) and the row matching (a maximum bipartite matching,
//! or position by position when order matters).

use crate::table::Table;
use assay_plugin_sdk::Json;
use std::collections::{HashMap, VecDeque};

/// How cells and tables are compared.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// Rows must appear in the same order (row i against row i).
    pub ordered: bool,
    /// Numbers within this absolute difference are equal.
    pub tolerance: f64,
    /// When set, numbers are rounded to this many decimals before comparing.
    pub decimals: Option<u32>,
    /// Strings holding a number (`"3"`, `" 2.50 "`) equal that number.
    pub coerce: bool,
    /// Actual columns with no expected counterpart do not stop the tables
    /// being equivalent.
    pub allow_extra_columns: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { ordered: false, tolerance: 1e-6, decimals: None, coerce: false, allow_extra_columns: false }
    }
}

/// A number read from a cell: integers are kept exact.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }
}

impl Options {
    /// The cell as a number: a JSON number, or with `coerce` a string that
    /// parses as a finite number once trimmed.
    fn number(&self, value: &Json) -> Option<Num> {
        match value {
            Json::Number(n) => Some(
                n.as_i64()
                    .map(|i| Num::Int(i.into()))
                    .or_else(|| n.as_u64().map(|u| Num::Int(u.into())))
                    .unwrap_or_else(|| Num::Float(n.as_f64().unwrap_or(f64::NAN))),
            ),
            Json::String(s) if self.coerce => {
                let s = s.trim();
                if let Ok(i) = s.parse::<i128>() {
                    return Some(Num::Int(i));
                }
                s.parse::<f64>().ok().filter(|f| f.is_finite()).map(Num::Float)
            }
            _ => None,
        }
    }

    /// A float rounded to `decimals`, if set.
    fn round(&self, value: f64) -> f64 {
        match self.decimals {
            Some(d) => {
                let scale = 10f64.powi(d as i32);
                (value * scale).round() / scale
            }
            None => value,
        }
    }

    fn numbers_equal(&self, a: Num, b: Num) -> bool {
        match (a, b) {
            (Num::Int(x), Num::Int(y)) => (x - y).unsigned_abs() as f64 <= self.tolerance,
            _ => (self.round(a.as_f64()) - self.round(b.as_f64())).abs() <= self.tolerance,
        }
    }

    /// Whether two cells are equal: numbers within the tolerance (after
    /// rounding), other values exactly (`"5" != 5` unless `coerce`,
    /// `true != 1`), lists and objects element by element.
    pub fn cells_equal(&self, a: &Json, b: &Json) -> bool {
        if let (Some(x), Some(y)) = (self.number(a), self.number(b)) {
            return self.numbers_equal(x, y);
        }
        match (a, b) {
            (Json::Array(x), Json::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(a, b)| self.cells_equal(a, b))
            }
            (Json::Object(x), Json::Object(y)) => {
                x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| self.cells_equal(v, w)))
            }
            (Json::Number(_), _) | (_, Json::Number(_)) => false,
            _ => a == b,
        }
    }

    /// A key that equal cells share, for cells compared exactly (strings
    /// that are not numbers, booleans, null); `None` for numbers and nested
    /// values, which need [`Options::cells_equal`].
    fn exact_key(&self, value: &Json) -> Option<String> {
        match value {
            Json::Array(_) | Json::Object(_) | Json::Number(_) => None,
            Json::String(_) if self.number(value).is_some() => None,
            other => Some(other.to_string()),
        }
    }
}

/// What comparing two tables found.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// For each expected column, the actual column it was matched with.
    pub mapping: Vec<Option<usize>>,
    /// For each expected row, the actual row it was matched with.
    pub matches: Vec<Option<usize>>,
    /// How many expected rows were matched.
    pub matched: usize,
    /// Actual columns no expected column was matched with.
    pub extra_columns: Vec<usize>,
    /// The fraction of expected rows matched; for an empty expected table,
    /// 1 when the actual table is empty too and 0 otherwise.
    pub score: f64,
    /// Every expected row matched, no other actual rows, every expected
    /// column present, and no extra actual columns unless allowed.
    pub equivalent: bool,
}

impl Comparison {
    /// Expected columns with no actual counterpart.
    pub fn missing_columns(&self) -> Vec<usize> {
        (0..self.mapping.len()).filter(|&c| self.mapping[c].is_none()).collect()
    }

    /// Actual rows no expected row was matched with, in order.
    pub fn unmatched_actual(&self, actual_rows: usize) -> Vec<usize> {
        let mut used = vec![false; actual_rows];
        for &row in self.matches.iter().flatten() {
            used[row] = true;
        }
        (0..actual_rows).filter(|&r| !used[r]).collect()
    }
}

/// Rows grouped by the key of their exactly-compared cells: the expected
/// rows and the actual rows of each group.
type Groups = HashMap<Vec<Option<String>>, (Vec<usize>, Vec<usize>)>;

/// A column mapping, the row matches it gives and how many rows matched.
type Mapped = (Vec<Option<usize>>, Vec<Option<usize>>, usize);

/// How many times the row matching may run while looking for a better
/// column mapping than the first.
const MAPPING_BUDGET: usize = 64;

/// Compares the actual table with the expected one.
pub fn compare_tables(actual: &Table, expected: &Table, options: &Options) -> Comparison {
    let mut mapping = map_columns(actual, expected, options);
    let mut matches = match_rows(actual, expected, &mapping, options);
    let mut matched = matches.iter().flatten().count();
    if matched < expected.len() && mapping.iter().all(Option::is_some) {
        (mapping, matches, matched) = improve_mapping(actual, expected, options, mapping, matches, matched);
    }
    let used: Vec<usize> = mapping.iter().flatten().copied().collect();
    let extra_columns: Vec<usize> = (0..actual.columns.len()).filter(|c| !used.contains(c)).collect();
    let score = if expected.is_empty() {
        if actual.is_empty() { 1.0 } else { 0.0 }
    } else {
        matched as f64 / expected.len() as f64
    };
    let equivalent = matched == expected.len()
        && actual.len() == expected.len()
        && mapping.iter().all(Option::is_some)
        && (options.allow_extra_columns || extra_columns.is_empty() || expected.is_empty());
    Comparison { mapping, matches, matched, extra_columns, score, equivalent }
}

/// Matches expected columns with actual columns: the assignment with the
/// most agreeing values (as multisets of cells, or position by position when
/// `ordered`), then equal names (ignoring ASCII case), then equal positions.
fn map_columns(actual: &Table, expected: &Table, options: &Options) -> Vec<Option<usize>> {
    let (e, a) = (expected.columns.len(), actual.columns.len());
    if e == 0 || a == 0 {
        return vec![None; e];
    }
    fn column(table: &Table, c: usize) -> Vec<&Json> {
        table.rows.iter().map(|row| &row[c]).collect()
    }
    let expected_columns: Vec<Vec<&Json>> = (0..e).map(|c| column(expected, c)).collect();
    let actual_columns: Vec<Vec<&Json>> = (0..a).map(|c| column(actual, c)).collect();
    let names = expected.named && actual.named;
    let weights: Vec<Vec<i64>> = (0..e)
        .map(|i| {
            (0..a)
                .map(|j| {
                    let overlap = if options.ordered {
                        expected_columns[i]
                            .iter()
                            .zip(&actual_columns[j])
                            .filter(|(x, y)| options.cells_equal(x, y))
                            .count()
                    } else {
                        multiset_overlap(&expected_columns[i], &actual_columns[j], options)
                    };
                    let same_name = names && expected.columns[i].eq_ignore_ascii_case(&actual.columns[j]);
                    4 * overlap as i64 + 2 * i64::from(same_name) + i64::from(i == j)
                })
                .collect()
        })
        .collect();
    if e <= a {
        assign(&weights).into_iter().map(Some).collect()
    } else {
        let transposed: Vec<Vec<i64>> = (0..a).map(|j| (0..e).map(|i| weights[i][j]).collect()).collect();
        let mut mapping = vec![None; e];
        for (j, i) in assign(&transposed).into_iter().enumerate() {
            mapping[i] = Some(j);
        }
        mapping
    }
}

/// How many cells two columns share, as multisets: exact values by key,
/// numbers by a sorted sweep within the tolerance, nested values pairwise.
fn multiset_overlap(xs: &[&Json], ys: &[&Json], options: &Options) -> usize {
    let mut keys: HashMap<String, usize> = HashMap::new();
    let (mut x_numbers, mut y_numbers) = (Vec::new(), Vec::new());
    let (mut x_nested, mut y_nested) = (Vec::new(), Vec::new());
    for &x in xs {
        if let Some(n) = options.number(x) {
            x_numbers.push(options.round(n.as_f64()));
        } else if let Some(key) = options.exact_key(x) {
            *keys.entry(key).or_default() += 1;
        } else {
            x_nested.push(x);
        }
    }
    let mut overlap = 0;
    for &y in ys {
        if let Some(n) = options.number(y) {
            y_numbers.push(options.round(n.as_f64()));
        } else if let Some(key) = options.exact_key(y) {
            if let Some(count) = keys.get_mut(&key).filter(|c| **c > 0) {
                *count -= 1;
                overlap += 1;
            }
        } else {
            y_nested.push(y);
        }
    }
    x_numbers.sort_by(f64::total_cmp);
    y_numbers.sort_by(f64::total_cmp);
    let (mut i, mut j) = (0, 0);
    while i < x_numbers.len() && j < y_numbers.len() {
        if (x_numbers[i] - y_numbers[j]).abs() <= options.tolerance {
            overlap += 1;
            i += 1;
            j += 1;
        } else if x_numbers[i] < y_numbers[j] {
            i += 1;
        } else {
            j += 1;
        }
    }
    let mut used = vec![false; y_nested.len()];
    for x in x_nested {
        if let Some(k) = (0..y_nested.len()).find(|&k| !used[k] && options.cells_equal(x, y_nested[k])) {
            used[k] = true;
            overlap += 1;
        }
    }
    overlap
}

/// The assignment of rows to distinct columns with the largest total
/// weight (Hungarian algorithm, O(n²·m)); needs `n <= m`.
fn assign(weights: &[Vec<i64>]) -> Vec<usize> {
    let n = weights.len();
    let m = weights.first().map_or(0, Vec::len);
    debug_assert!(n <= m);
    let max = weights.iter().flatten().copied().max().unwrap_or(0);
    let cost = |i: usize, j: usize| max - weights[i - 1][j - 1];
    // 1-based potentials and matching; column 0 is the virtual start.
    let (mut u, mut v) = (vec![0i64; n + 1], vec![0i64; m + 1]);
    let (mut row_of, mut way) = (vec![0usize; m + 1], vec![0usize; m + 1]);
    for i in 1..=n {
        row_of[0] = i;
        let mut j0 = 0;
        let mut min_to = vec![i64::MAX; m + 1];
        let mut used = vec![false; m + 1];
        loop {
            used[j0] = true;
            let i0 = row_of[j0];
            let (mut delta, mut j1) = (i64::MAX, 0);
            for j in 1..=m {
                if !used[j] {
                    let reduced = cost(i0, j) - u[i0] - v[j];
                    if reduced < min_to[j] {
                        min_to[j] = reduced;
                        way[j] = j0;
                    }
                    if min_to[j] < delta {
                        delta = min_to[j];
                        j1 = j;
                    }
                }
            }
            for j in 0..=m {
                if used[j] {
                    u[row_of[j]] += delta;
                    v[j] -= delta;
                } else {
                    min_to[j] -= delta;
                }
            }
            j0 = j1;
            if row_of[j0] == 0 {
                break;
            }
        }
        loop {
            let j1 = way[j0];
            row_of[j0] = row_of[j1];
            j0 = j1;
            if j0 == 0 {
                break;
            }
        }
    }
    let mut assignment = vec![0; n];
    for j in 1..=m {
        if row_of[j] != 0 {
            assignment[row_of[j] - 1] = j - 1;
        }
    }
    assignment
}

/// Whether expected row `e` equals actual row `a` on every mapped column.
fn rows_equal(
    actual: &Table,
    expected: &Table,
    pairs: &[(usize, usize)],
    e: usize,
    a: usize,
    options: &Options,
) -> bool {
    pairs.iter().all(|&(ec, ac)| options.cells_equal(&expected.rows[e][ec], &actual.rows[a][ac]))
}

/// Matches expected rows with actual rows under a column mapping: position
/// by position when `ordered`, otherwise a maximum matching (each actual
/// row serves one expected row, so duplicates count). With an unmapped
/// expected column no row matches.
fn match_rows(actual: &Table, expected: &Table, mapping: &[Option<usize>], options: &Options) -> Vec<Option<usize>> {
    let mut matches = vec![None; expected.len()];
    let Some(pairs) = mapping.iter().enumerate().map(|(e, a)| a.map(|a| (e, a))).collect::<Option<Vec<_>>>() else {
        return matches;
    };
    if options.ordered {
        for (e, slot) in matches.iter_mut().enumerate().take(actual.len()) {
            if rows_equal(actual, expected, &pairs, e, e, options) {
                *slot = Some(e);
            }
        }
        return matches;
    }
    // Rows can only match rows with the same exactly-compared cells: group
    // both sides by those, and match within each group.
    let key = |table: &Table, row: usize, column: fn(&(usize, usize)) -> usize| -> Vec<Option<String>> {
        pairs.iter().map(|p| options.exact_key(&table.rows[row][column(p)])).collect()
    };
    let mut groups: Groups = HashMap::new();
    for e in 0..expected.len() {
        groups.entry(key(expected, e, |p| p.0)).or_default().0.push(e);
    }
    for a in 0..actual.len() {
        if let Some(group) = groups.get_mut(&key(actual, a, |p| p.1)) {
            group.1.push(a);
        }
    }
    for (key, (left, right)) in groups {
        if right.is_empty() {
            continue;
        }
        // A key with a `None` means numbers or nested values still need
        // comparing; otherwise every pair in the group is equal.
        let adjacency: Vec<Vec<usize>> = if key.iter().all(Option::is_some) {
            vec![(0..right.len()).collect(); left.len()]
        } else {
            let candidates = NumberIndex::build(actual, expected, &pairs, &left, &right, options);
            left.iter()
                .map(|&e| {
                    let mut fitting: Vec<usize> = candidates
                        .candidates(expected, e, right.len())
                        .filter(|&k| rows_equal(actual, expected, &pairs, e, right[k], options))
                        .collect();
                    fitting.sort_unstable();
                    fitting
                })
                .collect()
        };
        for (l, r) in max_matching(&adjacency, right.len()).into_iter().enumerate() {
            matches[left[l]] = r.map(|k| right[k]);
        }
    }
    matches
}

/// Narrows the actual rows of a group an expected row needs comparing with:
/// when some mapped column holds numbers in every row of the group, the
/// actual rows sorted by that column (the one with the most distinct
/// values), so that only rows within the tolerance are compared.
struct NumberIndex<'a> {
    /// The expected column of the index, if there is one.
    column: Option<usize>,
    /// The actual rows' values in the index column, sorted, each with the
    /// row's position in the group.
    sorted: Sorted,
    options: &'a Options,
}

/// Values with positions, sorted by value.
type Sorted = Vec<(f64, usize)>;

impl<'a> NumberIndex<'a> {
    fn build(
        actual: &Table,
        expected: &Table,
        pairs: &[(usize, usize)],
        left: &[usize],
        right: &[usize],
        options: &'a Options,
    ) -> Self {
        let numeric = |table: &Table, rows: &[usize], column: usize| -> Option<Vec<f64>> {
            rows.iter().map(|&r| options.number(&table.rows[r][column]).map(|n| options.round(n.as_f64()))).collect()
        };
        // (expected column, sorted actual values, distinct values)
        let mut best: Option<(usize, Sorted, usize)> = None;
        for &(ec, ac) in pairs {
            if numeric(expected, left, ec).is_none() {
                continue;
            }
            let Some(values) = numeric(actual, right, ac) else { continue };
            let mut sorted: Sorted = values.into_iter().enumerate().map(|(k, v)| (v, k)).collect();
            sorted.sort_by(|x, y| x.0.total_cmp(&y.0));
            let distinct = 1 + sorted.windows(2).filter(|w| w[0].0 != w[1].0).count();
            if best.as_ref().is_none_or(|b| distinct > b.2) {
                best = Some((ec, sorted, distinct));
            }
        }
        match best {
            Some((column, sorted, _)) => NumberIndex { column: Some(column), sorted, options },
            None => NumberIndex { column: None, sorted: Vec::new(), options },
        }
    }

    /// The positions in the group of the actual rows expected row `e` may
    /// equal: those whose index value lies within the tolerance (widened a
    /// little for integers beyond 2^53), or all of them without an index.
    fn candidates(&self, expected: &Table, e: usize, count: usize) -> Box<dyn Iterator<Item = usize> + '_> {
        let Some(column) = self.column else { return Box::new(0..count) };
        let sorted = &self.sorted;
        let value = self.options.number(&expected.rows[e][column]).map_or(0.0, |n| self.options.round(n.as_f64()));
        let margin = self.options.tolerance + value.abs() * 4.0 * f64::EPSILON;
        let start = sorted.partition_point(|&(v, _)| v < value - margin);
        Box::new(sorted[start..].iter().take_while(move |&&(v, _)| v <= value + margin).map(|&(_, k)| k))
    }
}

/// A maximum bipartite matching: greedy first, then augmenting paths found
/// breadth-first (no recursion, so no deep stacks). `adjacency[l]` lists the
/// right vertices left vertex `l` may take.
fn max_matching(adjacency: &[Vec<usize>], right: usize) -> Vec<Option<usize>> {
    let mut left_to = vec![None; adjacency.len()];
    let mut right_to: Vec<Option<usize>> = vec![None; right];
    for (l, options) in adjacency.iter().enumerate() {
        if let Some(&r) = options.iter().find(|&&r| right_to[r].is_none()) {
            left_to[l] = Some(r);
            right_to[r] = Some(l);
        }
    }
    let mut came_from: Vec<Option<usize>> = vec![None; right];
    let mut visited = vec![false; right];
    for start in 0..adjacency.len() {
        if left_to[start].is_some() || adjacency[start].is_empty() {
            continue;
        }
        visited.iter_mut().for_each(|v| *v = false);
        let mut queue = VecDeque::from([start]);
        let mut free = None;
        'search: while let Some(l) = queue.pop_front() {
            for &r in &adjacency[l] {
                if visited[r] {
                    continue;
                }
                visited[r] = true;
                came_from[r] = Some(l);
                match right_to[r] {
                    None => {
                        free = Some(r);
                        break 'search;
                    }
                    Some(next) => queue.push_back(next),
                }
            }
        }
        let mut r = match free {
            Some(r) => r,
            None => continue,
        };
        loop {
            let l = came_from[r].expect("every visited right vertex has a predecessor");
            let previous = left_to[l];
            left_to[l] = Some(r);
            right_to[r] = Some(l);
            match previous {
                Some(p) => r = p,
                None => break,
            }
        }
    }
    left_to
}

/// Looks for a column mapping that matches more rows: swaps the actual
/// columns of two expected columns, or moves one to an unused actual column,
/// keeping any change that matches more rows, within [`MAPPING_BUDGET`]
/// row matchings. This settles columns the values alone cannot tell apart
/// (an `id` and a `rank` column holding the same numbers).
fn improve_mapping(
    actual: &Table,
    expected: &Table,
    options: &Options,
    mut mapping: Vec<Option<usize>>,
    mut matches: Vec<Option<usize>>,
    mut matched: usize,
) -> Mapped {
    let mut budget = MAPPING_BUDGET;
    let mut improved = true;
    while improved && budget > 0 && matched < expected.len() {
        improved = false;
        let mut candidates: Vec<Vec<Option<usize>>> = Vec::new();
        for i in 0..mapping.len() {
            for j in i + 1..mapping.len() {
                let mut candidate = mapping.clone();
                candidate.swap(i, j);
                candidates.push(candidate);
            }
            for unused in (0..actual.columns.len()).filter(|c| !mapping.contains(&Some(*c))) {
                let mut candidate = mapping.clone();
                candidate[i] = Some(unused);
                candidates.push(candidate);
            }
        }
        for candidate in candidates {
            if budget == 0 {
                break;
            }
            budget -= 1;
            let candidate_matches = match_rows(actual, expected, &candidate, options);
            let count = candidate_matches.iter().flatten().count();
            if count > matched {
                (mapping, matches, matched) = (candidate, candidate_matches, count);
                improved = true;
                break;
            }
        }
    }
    (mapping, matches, matched)
}
