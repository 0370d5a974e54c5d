//! How a simulated figure is marked, in every format and in the headlines: the mark is
//! spelled here once.
//! Whether something is simulated is the report model's flag (a cell, a judge section, a
//! table, a row); these only say how that flag reads.

use super::model::Report;

/// The word, as a name's mark and the HTML table badge read it.
macro_rules! word {
    () => {
        "simulated"
    };
}

/// The word in capitals, as a title's mark and the page badge read it.
macro_rules! word_upper {
    () => {
        "SIMULATED"
    };
}

/// After a name whose figures are simulated: `sim-swift / glm-sim (simulated)`.
pub const NAME_MARK: &str = concat!(" (", word!(), ")");

/// In a title whose table holds simulated figures: `RELIABILITY · SIMULATED · …`.
pub const TITLE_MARK: &str = concat!(" · ", word_upper!());

/// The HTML page's badge beside its heading.
pub const PAGE_BADGE: &str = concat!("<span class=\"sim\">", word_upper!(), "</span>");

/// The HTML badge beside a table's heading.
pub const TABLE_BADGE: &str = concat!("<span class=\"sim\">", word!(), "</span>");

/// Short, where a column header or a chart legend has no room: `judge (sim)`.
pub const HEADER_MARK: &str = " (sim)";

/// Short in a chart's legend and labels: `sim-swift (sim.)`.
pub const LEGEND_MARK: &str = " (sim.)";

/// [`NAME_MARK`] when `simulated`, else nothing.
pub fn name_mark(simulated: bool) -> &'static str {
    if simulated { NAME_MARK } else { "" }
}

/// [`TITLE_MARK`] when `simulated`, else nothing.
pub fn title_mark(simulated: bool) -> &'static str {
    if simulated { TITLE_MARK } else { "" }
}

/// How simulated rows are marked: when every cell is simulated, once in each table's
/// title; when real and simulated cells mix, on each simulated row. The cell tables and
/// the replay tables (src/export/sections.rs, src/export/replay_tables.rs) both mark this way.
#[derive(Clone, Copy)]
pub struct Marks {
    /// Every cell is simulated: the titles carry the mark.
    pub all: bool,
}

impl Marks {
    /// Marks for a report's cells.
    pub fn of(r: &Report) -> Marks {
        Marks::all_of(r.cells.iter().map(|c| c.simulated))
    }

    /// Marks for cells with these simulated flags.
    pub fn all_of(mut flags: impl Iterator<Item = bool>) -> Marks {
        let first = flags.next();
        Marks {
            all: first == Some(true) && flags.all(|f| f),
        }
    }

    /// The mark after a row's name: only when real and simulated cells mix.
    pub fn row(self, simulated: bool) -> &'static str {
        if self.all { "" } else { name_mark(simulated) }
    }
}
