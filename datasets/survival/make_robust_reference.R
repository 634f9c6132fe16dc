# Records R's robust and cluster-robust Cox variances and R's residuals
# (residuals(fit, type = "score" / "martingale" / "schoenfeld" / "dfbeta")) in
# r_robust_reference.json: the independent reference that tests/test_cox_robust.py
# checks graphpar.CoxPH(robust=True / cluster=...) and its residual methods against.
#
# Run from this folder, after make_reference.R (it reads the CSV files that
# script writes):  Rscript make_robust_reference.R
# It also writes colon_etype.csv: both records (recurrence, etype 1; death, etype 2)
# of every colon patient, so that cluster(id) groups two rows per patient.
# Every entry records the exact R call (fit_call) and the calls of its values.
library(survival)

num <- function(x) paste(sprintf("%.17g", x), collapse = ", ")
str_or_null <- function(x) if (is.null(x)) "null" else paste0("\"", x, "\"")
q <- function(x) gsub("\"", "\\\\\"", x)
mat <- function(m) {  # a JSON list of rows
  m <- as.matrix(m)
  paste0("[", paste0("[", apply(m, 1, num), "]", collapse = ", "), "]")
}

write_csv <- function(df, name) {
  txt <- df
  for (k in seq_along(txt)) txt[[k]] <- sprintf("%.17g", txt[[k]])
  write.csv(txt, name, row.names = FALSE, quote = FALSE)
  read.csv(name)
}

lung2 <- read.csv("lung.csv")
vety <- read.csv("veteran_years.csv")
ov2 <- read.csv("ovarian.csv")
rats2 <- read.csv("rats.csv")
pbc2 <- read.csv("pbc.csv")
heart2 <- read.csv("heart.csv")        # written by make_counting_reference.R
vetentry <- read.csv("veteran_entry.csv")
# R asks counting-process fits with robust = TRUE for cluster/id: one cluster per row
# (column `row`, not in the CSV file: 1, 2, ..., n) is the plain robust variance
vetentry$row <- seq_len(nrow(vetentry))

cole <- with(colon, data.frame(id = id, etype = etype, time = time, status = status,
                               rx_lev = as.integer(rx == "Lev"),
                               rx_lev5fu = as.integer(rx == "Lev+5FU"), age = age,
                               nodes = nodes, extent = extent))
cole <- cole[complete.cases(cole), ]
cole <- write_csv(cole, "colon_etype.csv")

# Three more data sets of the survival package, written here: flchain (complete cases of
# the columns used, sex "M" -> male 1; 7874 rows, above the 4096 rows from which graphpar
# evaluates with its compiled kernels), cgd (counting process, recurrent infections;
# treat "rIFN-g" -> trt 1, sex "male" -> male 1) and bladder2 (counting process,
# recurrences, one stratum per recurrence number enum).
fl2 <- with(flchain, data.frame(futime = futime, death = death, age = age,
                                male = as.integer(sex == "M"), kappa = kappa,
                                lambda = lambda))
fl2 <- write_csv(fl2[complete.cases(fl2), ], "flchain.csv")
cgd2 <- with(cgd, data.frame(id = id, tstart = tstart, tstop = tstop, status = status,
                             trt = as.integer(treat == "rIFN-g"),
                             male = as.integer(sex == "male"), age = age))
cgd2 <- write_csv(cgd2, "cgd.csv")
bl2 <- with(bladder2, data.frame(id = id, start = start, stop = stop, event = event,
                                 rx = rx, number = number, size = size, enum = enum))
bl2 <- write_csv(bl2, "bladder2.csv")

# residuals = TRUE: the entry also records R's residuals (kept to the smaller data sets)
models <- list(
  list(name = "lung_robust", data = "lung.csv", d = "lung2", time = "time", event = "status",
       covariates = c("age", "sex", "ph_ecog", "ph_karno", "wt_loss"), robust = TRUE),
  list(name = "lung_strata_robust", data = "lung.csv", d = "lung2", time = "time",
       event = "status", covariates = c("age", "sex", "ph_ecog"), strata = "inst",
       robust = TRUE),
  list(name = "lung_cluster_inst", data = "lung.csv", d = "lung2", time = "time",
       event = "status", covariates = c("age", "sex", "ph_ecog"), cluster = "inst"),
  list(name = "lung_offset_robust", data = "lung.csv", d = "lung2", time = "time",
       event = "status", covariates = c("sex", "ph_ecog"), offset = "0.01 * age",
       offset_vars = "age", robust = TRUE, residuals = TRUE),
  list(name = "ovarian_robust", data = "ovarian.csv", d = "ov2", time = "futime",
       event = "fustat", covariates = c("age", "resid_ds", "rx", "ecog_ps"), robust = TRUE,
       residuals = TRUE),
  list(name = "rats_weights_cluster_litter", data = "rats.csv", d = "rats2", time = "time",
       event = "status", covariates = c("rx", "female"), weights = "w", cluster = "litter",
       residuals = TRUE),
  list(name = "rats_weights_strata_cluster_litter", data = "rats.csv", d = "rats2",
       time = "time", event = "status", covariates = c("rx"), weights = "w",
       strata = "female", cluster = "litter", residuals = TRUE),
  list(name = "veteran_years_strata_robust", data = "veteran_years.csv", d = "vety",
       time = "time", event = "status", covariates = c("trt", "karno", "age"),
       strata = "celltype", robust = TRUE, residuals = TRUE),
  list(name = "colon_etype_strata_cluster_id", data = "colon_etype.csv", d = "cole",
       time = "time", event = "status",
       covariates = c("rx_lev", "rx_lev5fu", "age", "nodes", "extent"), strata = "etype",
       cluster = "id"),
  list(name = "heart_counting_cluster_id", data = "heart.csv", d = "heart2", entry = "start",
       time = "stop", event = "event", covariates = c("age", "year", "surgery", "transplant"),
       cluster = "id", residuals = TRUE),
  list(name = "veteran_entry_weights_strata_cluster_row", data = "veteran_entry.csv",
       d = "vetentry", entry = "entry", time = "time", event = "status",
       covariates = c("trt", "karno", "age"), strata = "celltype", weights = "w",
       cluster = "row", residuals = TRUE),
  list(name = "lung_ridge_robust", data = "lung.csv", d = "lung2", time = "time",
       event = "status", covariates = c("age", "sex", "ph_ecog"), ridge = 1, robust = TRUE),
  list(name = "pbc_robust", data = "pbc.csv", d = "pbc2", time = "time", event = "death",
       covariates = c("age", "edema", "log_bili", "log_albumin", "log_protime"),
       robust = TRUE),
  list(name = "flchain_robust", data = "flchain.csv", d = "fl2", time = "futime",
       event = "death", covariates = c("age", "male", "kappa", "lambda"), robust = TRUE),
  list(name = "cgd_counting_cluster_id", data = "cgd.csv", d = "cgd2", entry = "tstart",
       time = "tstop", event = "status", covariates = c("trt", "male", "age"),
       cluster = "id", residuals = TRUE),
  list(name = "bladder2_counting_strata_cluster_id", data = "bladder2.csv", d = "bl2",
       entry = "start", time = "stop", event = "event",
       covariates = c("rx", "number", "size"), strata = "enum", cluster = "id")
)

out <- c()
for (m in models) {
  for (ties in c("efron", "breslow")) {
    rhs <- paste(m$covariates, collapse = " + ")
    if (!is.null(m$ridge))  # graphpar's penalizer = theta on unscaled covariates
      rhs <- sprintf("ridge(%s, theta = %s, scale = FALSE)",
                     paste(m$covariates, collapse = ", "), m$ridge)
    if (!is.null(m$strata)) rhs <- paste0(rhs, " + strata(", m$strata, ")")
    if (!is.null(m$offset)) rhs <- paste0(rhs, " + offset(", m$offset, ")")
    if (!is.null(m$cluster)) rhs <- paste0(rhs, " + cluster(", m$cluster, ")")
    surv <- paste(c(m$entry, m$time, m$event), collapse = ", ")
    fit_call <- sprintf("fit <- coxph(Surv(%s) ~ %s, data = %s, ties = \"%s\"%s%s)",
                        surv, rhs, m$d, ties,
                        if (is.null(m$weights)) "" else paste0(", weights = ", m$weights),
                        if (isTRUE(m$robust)) ", robust = TRUE" else "")
    eval(parse(text = fit_call))
    res <- ""
    if (isTRUE(m$residuals)) {
      res <- paste0(
        ",\n   \"score\": ", mat(residuals(fit, type = "score")),
        ",\n   \"martingale\": [", num(unname(residuals(fit, type = "martingale"))), "]",
        ",\n   \"schoenfeld\": ", mat(residuals(fit, type = "schoenfeld")),
        ",\n   \"schoenfeld_time\": [",
        num(as.numeric(rownames(as.matrix(residuals(fit, type = "schoenfeld"))))), "]",
        ",\n   \"dfbeta\": ", mat(residuals(fit, type = "dfbeta")))
    }
    entry <- paste0(
      "{\"name\": \"", m$name, "\", \"data\": \"", m$data, "\", \"ties\": \"", ties, "\", ",
      "\"entry\": ", str_or_null(m$entry), ", ",
      "\"time\": \"", m$time, "\", \"event\": \"", m$event, "\", ",
      "\"covariates\": [", paste0("\"", m$covariates, "\"", collapse = ", "), "], ",
      "\"strata\": ", str_or_null(m$strata), ", ",
      "\"weights\": ", str_or_null(m$weights), ", ",
      "\"offset\": ", str_or_null(m$offset), ", ",
      "\"cluster\": ", str_or_null(m$cluster), ", ",
      "\"penalizer\": ", if (is.null(m$ridge)) 0 else m$ridge, ", ",
      "\"fit_call\": \"", q(fit_call), "\",\n   ",
      "\"coef\": [", num(unname(coef(fit))), "], ",
      "\"robust_se_call\": \"sqrt(diag(fit$var))\", ",
      "\"robust_se\": [", num(sqrt(diag(fit$var))), "], ",
      "\"model_se_call\": \"sqrt(diag(fit$naive.var))\", ",
      "\"model_se\": [", num(sqrt(diag(fit$naive.var))), "],\n   ",
      "\"robust_var\": ", mat(fit$var),
      if (nchar(res)) paste0(
        ",\n   \"residuals_calls\": \"residuals(fit, type = \\\"score\\\" / \\\"martingale\\\" / ",
        "\\\"schoenfeld\\\" / \\\"dfbeta\\\"); schoenfeld_time = rownames of the schoenfeld ",
        "matrix\"") else "",
      res, "}")
    out <- c(out, entry)
  }
}
header <- paste0("{\"generator\": \"Rscript make_robust_reference.R (", R.version.string,
                 ", survival ", packageVersion("survival"), ")\",\n \"fits\": [\n  ")
writeLines(paste0(header, paste(out, collapse = ",\n  "), "\n]}"), "r_robust_reference.json")
