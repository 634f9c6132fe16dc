# Records R's survfit.coxph predictions (cumulative hazard and survival curves of
# given newdata rows) in r_survfit_reference.json: the independent reference
# that tests/test_cox_predict.py checks graphpar.CoxPH's baseline hazard and
# predict_* methods against.
#
# Run from this folder, after make_reference.R (it reads the CSV files that
# script writes):  Rscript make_survfit_reference.R
# Every curve records the exact R calls that made it: the fit (fit_call) and
# the survfit call (survfit_call), with `nd` the newdata rows listed beside it.
library(survival)

num <- function(x) paste(sprintf("%.17g", x), collapse = ", ")
str_or_null <- function(x) if (is.null(x)) "null" else paste0("\"", x, "\"")
q <- function(x) gsub("\"", "\\\\\"", x)

lung2 <- read.csv("lung.csv")
vet2 <- read.csv("veteran.csv")
vety <- read.csv("veteran_years.csv")
ov2 <- read.csv("ovarian.csv")
rats2 <- read.csv("rats.csv")
col2 <- read.csv("colon.csv")
pbc2 <- read.csv("pbc.csv")

# newdata: two rows of the data set (the first and the middle one), with the
# columns the model needs (covariates, strata, offset variables).
models <- list(
  list(name = "lung", data = "lung.csv", d = "lung2", time = "time", event = "status",
       covariates = c("age", "sex", "ph_ecog", "ph_karno", "wt_loss")),
  list(name = "lung_strata_inst", data = "lung.csv", d = "lung2", time = "time",
       event = "status", covariates = c("age", "sex", "ph_ecog"), strata = "inst"),
  list(name = "lung_offset", data = "lung.csv", d = "lung2", time = "time", event = "status",
       covariates = c("sex", "ph_ecog"), offset = "0.01 * age", offset_vars = "age"),
  list(name = "veteran_strata", data = "veteran.csv", d = "vet2", time = "time",
       event = "status", covariates = c("trt", "karno", "diagtime", "age", "prior"),
       strata = "celltype"),
  list(name = "veteran_years_timefix", data = "veteran_years.csv", d = "vety", time = "time",
       event = "status", covariates = c("trt", "karno", "age"), strata = "celltype"),
  list(name = "ovarian", data = "ovarian.csv", d = "ov2", time = "futime", event = "fustat",
       covariates = c("age", "resid_ds", "rx", "ecog_ps")),
  list(name = "rats_weights", data = "rats.csv", d = "rats2", time = "time", event = "status",
       covariates = c("rx", "female"), weights = "w"),
  list(name = "rats_weights_strata", data = "rats.csv", d = "rats2", time = "time",
       event = "status", covariates = c("rx"), weights = "w", strata = "female"),
  list(name = "colon_death_strata", data = "colon.csv", d = "col2", time = "time",
       event = "status", covariates = c("rx_lev", "rx_lev5fu", "age", "nodes", "extent"),
       strata = "differ"),
  list(name = "pbc", data = "pbc.csv", d = "pbc2", time = "time", event = "death",
       covariates = c("age", "edema", "log_bili", "log_albumin", "log_protime"))
)

out <- c()
for (m in models) {
  d <- get(m$d)
  cols <- c(m$covariates, m$strata, m$offset_vars)
  rows <- c(1, nrow(d) %/% 2)
  nd <- d[rows, cols, drop = FALSE]
  for (ties in c("efron", "breslow")) {
    rhs <- paste(m$covariates, collapse = " + ")
    if (!is.null(m$strata)) rhs <- paste0(rhs, " + strata(", m$strata, ")")
    if (!is.null(m$offset)) rhs <- paste0(rhs, " + offset(", m$offset, ")")
    fit_call <- sprintf("fit <- coxph(Surv(%s, %s) ~ %s, data = %s, ties = \"%s\"%s)",
                        m$time, m$event, rhs, m$d, ties,
                        if (is.null(m$weights)) "" else paste0(", weights = ", m$weights))
    eval(parse(text = fit_call))
    curves <- c()
    for (i in seq_len(nrow(nd))) {
      survfit_call <- sprintf("survfit(fit, newdata = nd[%d, , drop = FALSE])", i)
      sf <- eval(parse(text = survfit_call))
      curves <- c(curves, paste0(
        "{\"survfit_call\": \"", q(survfit_call), "\", ",
        "\"stratum\": ", if (is.null(m$strata)) "null" else num(nd[i, m$strata]), ", ",
        "\"time\": [", num(sf$time), "], ",
        "\"cumhaz\": [", num(sf$cumhaz), "], ",
        "\"surv\": [", num(sf$surv), "]}"))
    }
    newdata <- paste0("{", paste0("\"", cols, "\": [",
                                  sapply(cols, function(k) num(nd[[k]])), "]",
                                  collapse = ", "), "}")
    entry <- paste0(
      "{\"name\": \"", m$name, "\", \"data\": \"", m$data, "\", \"ties\": \"", ties, "\", ",
      "\"time\": \"", m$time, "\", \"event\": \"", m$event, "\", ",
      "\"covariates\": [", paste0("\"", m$covariates, "\"", collapse = ", "), "], ",
      "\"strata\": ", str_or_null(m$strata), ", ",
      "\"weights\": ", str_or_null(m$weights), ", ",
      "\"offset\": ", str_or_null(m$offset), ", ",
      "\"data_rows\": [", paste(rows, collapse = ", "), "], ",
      "\"fit_call\": \"", q(fit_call), "\", ",
      "\"newdata_call\": \"", q(sprintf("nd <- %s[c(%s), c(%s), drop = FALSE]", m$d,
                                        paste(rows, collapse = ", "),
                                        paste0("\"", cols, "\"", collapse = ", "))), "\", ",
      "\"newdata\": ", newdata, ", ",
      "\"coef\": [", num(unname(coef(fit))), "],\n   ",
      "\"curves\": [\n    ", paste(curves, collapse = ",\n    "), "]}")
    out <- c(out, entry)
  }
}
header <- paste0("{\"generator\": \"Rscript make_survfit_reference.R (", R.version.string,
                 ", survival ", packageVersion("survival"), ")\",\n \"fits\": [\n  ")
writeLines(paste0(header, paste(out, collapse = ",\n  "), "\n]}"), "r_survfit_reference.json")
