//! The part of `js-sys` that `oxc-browserslist` calls on wasm32: `Date`,
//! in UTC, with the clock at the Unix epoch (components have no clock: the
//! `javascript` plugin's `Date.now()` is 0 too). See this crate's
//! `Cargo.toml` for why it exists.

/// A JavaScript `Date`: milliseconds since the Unix epoch, in UTC.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Date {
    millis: std::cell::Cell<f64>,
}

const MILLIS_PER_DAY: f64 = 86_400_000.0;

impl Date {
    /// `Date.now()`: the Unix epoch.
    pub fn now() -> f64 {
        0.0
    }

    /// `new Date()`.
    pub fn new_0() -> Date {
        Date { millis: std::cell::Cell::new(Date::now()) }
    }

    /// `date.setTime(millis)`.
    pub fn set_time(&self, millis: f64) -> f64 {
        self.millis.set(millis);
        millis
    }

    /// `date.getFullYear()`.
    pub fn get_full_year(&self) -> u32 {
        civil(self.millis.get()).0 as u32
    }

    /// `date.getMonth()` (0-based).
    pub fn get_month(&self) -> u32 {
        civil(self.millis.get()).1 - 1
    }

    /// `date.setFullYear(year, month)`: the new time, keeping the day and
    /// the time of day.
    pub fn set_full_year_with_month(&self, year: u32, month: i32) -> f64 {
        let (_, _, day) = civil(self.millis.get());
        let time_of_day = self.millis.get().rem_euclid(MILLIS_PER_DAY);
        let months = i64::from(year) * 12 + i64::from(month);
        let (year, month) = (months.div_euclid(12), months.rem_euclid(12) as u32 + 1);
        let millis = days_from_civil(year, month, day) as f64 * MILLIS_PER_DAY + time_of_day;
        self.millis.set(millis);
        millis
    }
}

/// (year, month 1-12, day) of a time, by Howard Hinnant's algorithm.
fn civil(millis: f64) -> (i64, u32, u32) {
    let days = (millis / MILLIS_PER_DAY).floor() as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_prime = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_prime + 2) / 5 + 1) as u32;
    let month = if month_prime < 10 { month_prime + 3 } else { month_prime - 9 } as u32;
    (year_of_era + era * 400 + i64::from(month <= 2), month, day)
}

/// Days since the Unix epoch of a civil date.
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i64::from(month);
    let day_of_year = (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil_dates_in_utc() {
        let epoch = Date::new_0();
        assert_eq!((epoch.get_full_year(), epoch.get_month()), (1970, 0));
        // 2024-02-29T12:00:00Z.
        let leap = Date::new_0();
        leap.set_time(1_709_208_000_000.0);
        assert_eq!((leap.get_full_year(), leap.get_month()), (2024, 1));
        assert_eq!(civil(leap.millis.get()), (2024, 2, 29));
        assert_eq!(leap.set_full_year_with_month(2024, 1), 1_709_208_000_000.0);
        // As in JavaScript, February 29th of a common year is March 1st.
        assert_eq!(civil(leap.set_full_year_with_month(2025, 13)), (2026, 3, 1));
        assert_eq!((leap.get_full_year(), leap.get_month()), (2026, 2));
    }
}
