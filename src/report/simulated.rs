//! How a simulated figure is marked, in every format and in the headlines: the mark is
//! spelled here once.
//! Whether something is simulated is the report model's flag (a cell, a judge section, a
//! table, a row); these only say how that flag reads.

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
