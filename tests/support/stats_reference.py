"""Reference values for the unit tests in src/stats.rs, computed independently with NumPy,
SciPy, statsmodels and the krippendorff package.

    python3 -m venv /tmp/statsenv
    /tmp/statsenv/bin/pip install numpy==2.4.6 scipy==1.17.1 statsmodels==0.15.0 krippendorff==0.9.0
    /tmp/statsenv/bin/python tests/support/stats_reference.py   # about 10 s

Every value printed here is pasted into a test beside the expression that produced it. The
bootstrap sections also print the tolerance each comparison uses: scipy and src/stats.rs draw
with different generators, so their bootstrap intervals agree only up to Monte-Carlo error,
never bit for bit.
"""

import numpy as np
import krippendorff
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

# Deterministic test data, written the same way in src/stats.rs (tests module): only +, -, *, /
# and the fractional part, so both languages produce the same bits.
PHI = 0.6180339887498949  # frac of the golden ratio
R2 = 0.7548776662466927  # 1 / plastic number
R3 = 0.5698402909980532  # 1 / (plastic number)^2


def frac(x):
    return x % 1.0


def latencies(n):
    """Right-skewed 'latencies' in seconds: 3 + 2u/(1.05 - u), u low-discrepancy in [0, 1)."""
    return np.array([3.0 + 2.0 * frac(i * PHI) / (1.05 - frac(i * PHI)) for i in range(n)])


def paired_cases():
    """44 (scenario, repeat) pairs: 15 scenarios of very different length, 3 repeats (one missing).

    b: provider B. a_consistent: A is about 15 % faster on every pair. a_inconsistent: A is
    0.6x on some pairs and 1.35x on others, so its p50 is lower but not consistently."""
    b, a_consistent, a_inconsistent = [], [], []
    for i in range(44):
        difficulty = 4.0 + 12.0 * frac((i // 3) * PHI)
        bi = difficulty * (1.0 + 0.2 * (frac(i * R2) - 0.5))
        b.append(bi)
        a_consistent.append(0.85 * bi + 0.3 * (frac(i * R3) - 0.5))
        a_inconsistent.append(bi * (1.35 if frac(i * R3) >= 0.5 else 0.6))
    return np.array(a_consistent), np.array(a_inconsistent), np.array(b)


def show(label, value):
    print(f"{label} = {value!r}")


def section(title):
    print(f"\n## {title}")


section("percentiles: numpy.percentile(x, q), method='linear' (the default)")
x_classic = np.array([15.0, 20.0, 35.0, 40.0, 50.0])
for q in [0, 5, 30, 33.3, 40, 50, 95, 100]:
    show(f"np.percentile([15, 20, 35, 40, 50], {q})", float(np.percentile(x_classic, q)))
show("np.percentile([0.1, 0.7], 70)", float(np.percentile([0.1, 0.7], 70)))
show("np.percentile([0.3, 1e6], 95)", float(np.percentile([0.3, 1e6], 95)))
x_ties = np.array([3.5, 1.0, 2.0, 2.0, 9.75, -4.0, 2.0, 0.5])
for q in [10, 25, 50, 75, 90, 99]:
    show(f"np.percentile({x_ties.tolist()}, {q})", float(np.percentile(x_ties, q)))
lat45 = latencies(45)
for q in [50, 95, 99]:
    show(f"np.percentile(latencies(45), {q})", float(np.percentile(lat45, q)))
show("np.mean(latencies(45))", float(np.mean(lat45)))
show("np.median(latencies(45))", float(np.median(lat45)))

section("Wilson: proportion_confint(k, n, alpha=0.05, method='wilson')")
for k, n in [(0, 1), (1, 1), (0, 10), (1, 10), (5, 10), (10, 10), (3, 7), (40, 45), (44, 45),
             (45, 45), (9500, 10000), (123456, 250000)]:
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    show(f"proportion_confint({k}, {n}, method='wilson')", (float(lo), float(hi)))
lo, hi = proportion_confint(40, 45, alpha=0.10, method="wilson")
show("proportion_confint(40, 45, alpha=0.10, method='wilson')", (float(lo), float(hi)))
show("scipy.stats.norm.ppf(0.975)", float(stats.norm.ppf(0.975)))
show("scipy.stats.norm.ppf(0.95)", float(stats.norm.ppf(0.95)))

section("Spearman: scipy.stats.spearmanr(x, y).statistic")
sx = [1.0, 2.0, 2.0, 3.0, 5.0, 4.0, 4.0, 7.0]
sy = [2.0, 1.0, 3.0, 3.0, 6.0, 4.0, 5.0, 5.0]
show(f"spearmanr({sx}, {sy})", float(stats.spearmanr(sx, sy).statistic))
judge = [4.0, 5.0, 3.0, 4.0, 2.0, 5.0, 4.0, 3.0, 1.0, 4.0]
lat10 = latencies(10)
show(f"spearmanr(latencies(10), {judge})", float(stats.spearmanr(lat10, judge).statistic))

section("Krippendorff's alpha: krippendorff.alpha(reliability_data=d, level_of_measurement=m)")
nan = np.nan
paper = [  # Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]
wiki = [  # Wikipedia's example, also in the krippendorff package's own tests
    [nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
    [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
    [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4],
]
lonely = [  # 7 appears only in a unit with a single value: not pairable, so it must not count
    [1, 2, 3, 3, 7, 4],
    [1, 3, 3, nan, nan, 4],
    [2, 2, 3, 4, nan, nan],
]
judges = [  # three judge replicates scoring ten conversations 1..5, two scores missing
    [4, 5, 3, 4, 2, 5, 4, 3, 1, 4],
    [4, 4, 3, 5, 2, 5, nan, 3, 2, 4],
    [5, 5, 2, 4, 1, nan, 4, 3, 1, 3],
]
for name, data in [("paper", paper), ("wiki", wiki), ("lonely", lonely), ("judges", judges)]:
    for level in ["nominal", "ordinal", "interval"]:
        show(f"alpha({name}, '{level}')",
             float(krippendorff.alpha(reliability_data=data, level_of_measurement=level)))


def mc_tolerance(label, sample_sets, statistic, paired, ours_resamples):
    """Reference interval from 100,000 scipy resamples, and a tolerance for comparing it with
    src/stats.rs run at `ours_resamples`: 4 x the combined Monte-Carlo standard deviation of an
    endpoint, the standard deviation measured over 20 scipy runs with different seeds."""
    kw = dict(vectorized=True, paired=paired, method="percentile", confidence_level=0.95)
    ref = stats.bootstrap(sample_sets, statistic, n_resamples=100_000, batch=10_000,
                          rng=np.random.default_rng(20261203), **kw).confidence_interval
    runs = np.array([
        tuple(stats.bootstrap(sample_sets, statistic, n_resamples=ours_resamples,
                              rng=np.random.default_rng(seed), **kw).confidence_interval)
        for seed in range(20)
    ])
    sd_ours = runs.std(axis=0, ddof=1).max()
    sd_ref = sd_ours * np.sqrt(ours_resamples / 100_000)
    tol = 4.0 * float(np.hypot(sd_ours, sd_ref))
    show(f"{label} interval", (float(ref.low), float(ref.high)))
    show(f"{label} tolerance (4 x MC sd at {ours_resamples} vs 100000 resamples)", tol)


section("bootstrap (method='percentile', 95 %): scipy.stats.bootstrap, vectorized statistic")
lat200 = latencies(200)
show("np.mean(latencies(200))", float(np.mean(lat200)))
show("np.percentile(latencies(200), 50)", float(np.percentile(lat200, 50)))
show("np.percentile(latencies(200), 95)", float(np.percentile(lat200, 95)))
mc_tolerance("bootstrap((latencies(200),), np.mean)", (lat200,),
             lambda x, axis: np.mean(x, axis=axis), False, 20_000)
for q in [50, 95]:
    mc_tolerance(f"bootstrap((latencies(200),), p{q})", (lat200,),
                 lambda x, axis, q=q: np.percentile(x, q, axis=axis), False, 20_000)

section("paired bootstrap: scipy.stats.bootstrap((a, b), stat(a) - stat(b), paired=True)")
a_con, a_inc, b = paired_cases()


def p50_diff(x, y, axis):
    return np.percentile(x, 50, axis=axis) - np.percentile(y, 50, axis=axis)


def mean_diff(x, y, axis):
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


show("p50(a_consistent) - p50(b)", float(np.percentile(a_con, 50) - np.percentile(b, 50)))
show("p50(a_inconsistent) - p50(b)", float(np.percentile(a_inc, 50) - np.percentile(b, 50)))
show("mean(a_consistent) - mean(b)", float(np.mean(a_con) - np.mean(b)))
mc_tolerance("paired p50 a_consistent - b", (a_con, b), p50_diff, True, 20_000)
mc_tolerance("paired p50 a_inconsistent - b", (a_inc, b), p50_diff, True, 20_000)
mc_tolerance("paired mean a_consistent - b", (a_con, b), mean_diff, True, 20_000)
for name, x in [("a_consistent", a_con), ("a_inconsistent", a_inc), ("b", b)]:
    ci = stats.bootstrap((x,), lambda s, axis: np.percentile(s, 50, axis=axis), vectorized=True,
                         method="percentile", n_resamples=100_000, batch=10_000,
                         rng=np.random.default_rng(20261203)).confidence_interval
    show(f"marginal p50 interval of {name}", (float(ci.low), float(ci.high)))

section("ratio of sums: scipy.stats.bootstrap((num, den), sum(num)/sum(den), paired=True)")


def ratio_units(n):
    """Per conversation: checks scored (3 to 14) and passed (a share that drifts with i)."""
    den = np.array([3.0 + float(int(frac(i * R2) * 12.0)) for i in range(n)])
    num = np.array([float(int(d * (0.55 + 0.4 * frac(i * PHI)))) for i, d in enumerate(den)])
    return num, den


num120, den120 = ratio_units(120)
show("sum(num)/sum(den) of ratio_units(120)", float(num120.sum() / den120.sum()))
mc_tolerance("paired ratio ratio_units(120)", (num120, den120),
             lambda x, y, axis: np.sum(x, axis=axis) / np.sum(y, axis=axis), True, 20_000)


section("Cohen's kappa (src/stats/kappa.rs): scikit-learn cohen_kappa_score, quadratic weights on the scale")
# Needs scikit-learn too (pip install scikit-learn; 1.9.1 gave these values). Only to compute
# the expected numbers: nothing at test time calls Python.
from sklearn.metrics import cohen_kappa_score  # noqa: E402

SCALE = list(range(1, 6))


def kappa_case_b(n):
    x, y = [], []
    for i in range(n):
        xi = 1 + int(5.0 * frac(i * PHI))
        d = [-1, 0, 0, 1][int(4.0 * frac(i * R2))]
        x.append(xi)
        y.append(min(5, max(1, xi + d)))
    return np.array(x), np.array(y)


show("hand", cohen_kappa_score([1, 2, 3, 4, 5], [1, 2, 3, 4, 4], weights="quadratic", labels=SCALE))
kx, ky = kappa_case_b(40)
show("case_b", cohen_kappa_score(kx, ky, weights="quadratic", labels=SCALE))
show("case_b reversed", cohen_kappa_score(kx, 6 - ky, weights="quadratic", labels=SCALE))
g1, g2 = [1, 2, 5, 5, 1, 2, 5, 1], [2, 1, 5, 2, 1, 5, 5, 2]
show("gaps, labels=scale", cohen_kappa_score(g1, g2, weights="quadratic", labels=SCALE))
show("gaps, values seen only", cohen_kappa_score(g1, g2, weights="quadratic"))
ka = [frac(i * PHI) < 0.6 for i in range(30)]
kb = [a != (frac(i * R2) < 0.2) for i, a in enumerate(ka)]
show("binary", cohen_kappa_score(ka, kb))
xc = np.array([1.5, 2.0, 3.5, 4.0, 5.0, 2.5, 3.0])
yc = np.array([1, 2, 4, 4, 5, 3, 2], dtype=float)
show("fractional", 1 - np.mean((xc - yc) ** 2) / np.mean((xc[:, None] - yc[None, :]) ** 2))
krng = np.random.default_rng(7)
kappas = []
for _ in range(20_000):
    idx = krng.integers(0, len(kx), len(kx))
    xs, ys = kx[idx].astype(float), ky[idx].astype(float)
    e = np.mean((xs[:, None] - ys[None, :]) ** 2)
    if e > 0:
        kappas.append(1 - np.mean((xs - ys) ** 2) / e)
show("case_b bootstrap 95 %", tuple(np.percentile(kappas, [2.5, 97.5])))
