//! Inclusive (total) sums per function: the one join of samples with their
//! stacks' sets (`stack_sets`) and the sets' functions (`set_functions`,
//! `functions`), the template `sql/_inclusive_sums.sql`. `function_total.sql`
//! is that template filled for the delivered samples per capture and
//! event (a test holds the file equal: other engines read the file), and
//! topdown's total rows fill it with their own sums.

use crate::helpers::{self, Param};

/// What an inclusive sum sums, and by what.
pub(crate) struct Inclusive<'a> {
    /// The key columns of the samples the rows keep, before the function
    /// (`capture`, `event_id`).
    pub(crate) keys: &'a [&'a str],
    /// The samples: a relation with `stack_id` and the keys.
    pub(crate) samples: &'a str,
    /// `stack_sets`, or a subquery of some of its rows.
    pub(crate) stack_sets: &'a str,
    /// How a sample `s` joins its stack's set `ss`.
    pub(crate) on: &'a str,
    /// Each sum's name and its aggregate over the samples of a set.
    pub(crate) sums: Vec<(String, String)>,
}

impl Inclusive<'_> {
    /// The query: the keys, `symbol`, `dso` and the sums.
    pub(crate) fn sql(&self) -> String {
        let keys = |f: &dyn Fn(&str) -> String| self.keys.iter().map(|k| f(k)).collect::<String>();
        let sums = |f: &dyn Fn(&str, &str) -> String| {
            self.sums
                .iter()
                .map(|(name, sum)| f(name, sum))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let set_keys = keys(&|k| format!("s.{k} AS {k}, "));
        let set_sums = sums(&|name, sum| format!("{sum} AS {name}"));
        let set_group = keys(&|k| format!("s.{k}, "));
        let g_keys = keys(&|k| format!("g.{k} AS {k}, "));
        let g_sums = sums(&|name, _| format!("SUM(g.{name}) AS {name}"));
        let g_group = keys(&|k| format!("g.{k}, "));
        let named_keys = keys(&|k| format!("t.{k} AS {k}, "));
        let named_sums = sums(&|name, _| format!("t.{name} AS {name}"));
        helpers::fill(
            helpers::INCLUSIVE_SUMS,
            &[
                ("stack_sets", Param::Sql(self.stack_sets)),
                ("samples", Param::Sql(self.samples)),
                ("on", Param::Sql(self.on)),
                ("set_keys", Param::Sql(&set_keys)),
                ("set_sums", Param::Sql(&set_sums)),
                ("set_group", Param::Sql(&set_group)),
                ("keys", Param::Sql(&g_keys)),
                ("sums", Param::Sql(&g_sums)),
                ("group", Param::Sql(&g_group)),
                ("named_keys", Param::Sql(&named_keys)),
                ("named_sums", Param::Sql(&named_sums)),
            ],
        )
    }
}

/// The join of a sample `s` with its stack's set `ss` in any capture.
pub(crate) const SAME_STACK: &str = "ss.capture = s.capture AND ss.stack_id = s.stack_id";

#[cfg(test)]
mod tests {
    use super::{Inclusive, SAME_STACK};
    use crate::helpers;

    /// `function_total`: the delivered samples per capture and event, counted
    /// and their periods summed.
    fn function_total() -> Inclusive<'static> {
        Inclusive {
            keys: &["capture", "event_id"],
            samples: "delivered_samples",
            stack_sets: "stack_sets",
            on: SAME_STACK,
            sums: vec![
                ("samples".into(), "COUNT(*)".into()),
                ("period".into(), "SUM(s.period)".into()),
            ],
        }
    }

    /// `off_cpu_function_total`: the off-CPU intervals per capture and
    /// state, counted and their lengths summed.
    fn off_cpu_function_total() -> Inclusive<'static> {
        Inclusive {
            keys: &["capture", "state"],
            samples: "off_cpu_stacks",
            stack_sets: "stack_sets",
            on: SAME_STACK,
            sums: vec![
                ("intervals".into(), "COUNT(*)".into()),
                ("total_ns".into(), "SUM(s.duration_ns)".into()),
            ],
        }
    }

    /// Other engines read `function_total.sql` and
    /// `off_cpu_function_total.sql` as they are: their queries are the
    /// template filled.
    #[test]
    fn total_views_are_the_template_filled() {
        for (name, filled) in [
            ("function_total", function_total()),
            ("off_cpu_function_total", off_cpu_function_total()),
        ] {
            let file = crate::views::sql(name).unwrap_or_default();
            let want = filled.sql();
            assert!(
                helpers::query(file) == want,
                "sql/{name}.sql's query is not _inclusive_sums.sql filled \
                 (inclusive::{name}); it would read:\n{want}"
            );
        }
    }
}
