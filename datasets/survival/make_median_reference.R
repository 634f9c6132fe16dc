# Records R's median survival times of survfit.coxph curves in
# r_median_reference.json: the reference that tests/test_cox_predict.py checks
# graphpar.CoxPH.predict_median against.
#
# Run from this folder (it reads the CSV files make_reference.R writes):
#   Rscript make_median_reference.R
# R's rule (survival:::findq, called by quantile.survfit and print.survfit):
# the median is the first time the curve is at most 0.5, except that where the
# curve equals 0.5 (within sqrt(.Machine$double.eps)) on an interval, it is the
# midpoint of that interval (of the first time and the last time of the curve
# when the curve ends at 0.5); NA when the curve stays above 0.5.
# Besides rows of the data, every model gets "crafted" rows whose curve is
# 0.5 (or 0.5 -+ 1e-10, or 0.5 - 1e-6) from an inner event time on, or from
# the last event time on: the first covariate is set to
# mean + log(-log(S) / H0(t)) / coef, with H0 the survfit cumulative hazard at
# the means (the covariates' other columns at their means). Every value records its R calls (fit_call, survfit_call,
# quantile_call).
library(survival)

num <- function(x) paste(ifelse(is.na(x), "null", sprintf("%.17g", x)), collapse = ", ")
q <- function(x) gsub("\"", "\\\\\"", x)

lung2 <- read.csv("lung.csv")
vet2 <- read.csv("veteran.csv")
rats2 <- read.csv("rats.csv")

models <- list(
  list(name = "veteran_karno", data = "veteran.csv", d = "vet2", time = "time",
       event = "status", covariates = c("karno")),
  list(name = "lung_strata_sex", data = "lung.csv", d = "lung2", time = "time",
       event = "status", covariates = c("age", "ph_ecog"), strata = "sex"),
  list(name = "rats_weights", data = "rats.csv", d = "rats2", time = "time",
       event = "status", covariates = c("rx", "female"), weights = "w")
)

fits <- c()
for (m in models) {
  d <- get(m$d)
  for (ties in c("efron", "breslow")) {
    rhs <- paste(m$covariates, collapse = " + ")
    if (!is.null(m$strata)) rhs <- paste0(rhs, " + strata(", m$strata, ")")
    fit_call <- sprintf("fit <- coxph(Surv(%s, %s) ~ %s, data = %s, ties = \"%s\"%s)",
                        m$time, m$event, rhs, m$d, ties,
                        if (is.null(m$weights)) "" else paste0(", weights = ", m$weights))
    eval(parse(text = fit_call))
    strata_values <- if (is.null(m$strata)) NA else sort(unique(d[[m$strata]]))
    rows <- list()
    # rows of the data: the first, the middle, the last
    for (i in c(1, nrow(d) %/% 2, nrow(d))) {
      rows[[length(rows) + 1]] <- list(kind = "data", x = unlist(d[i, m$covariates]),
                                       s = if (is.null(m$strata)) NA else d[i, m$strata])
    }
    # a row far below the mean risk: its curve stays above 0.5 (R: NA)
    low <- fit$means
    low[1] <- fit$means[1] - sign(coef(fit)[1]) * 6 / abs(coef(fit)[1])
    rows[[length(rows) + 1]] <- list(kind = "never", x = low, s = strata_values[1])
    for (s in strata_values) {
      nd0 <- as.data.frame(as.list(fit$means))
      if (!is.null(m$strata)) nd0[[m$strata]] <- s
      sf0 <- survfit(fit, newdata = nd0)
      steps <- which(diff(c(0, sf0$cumhaz)) > 0)
      # the target survival at step k: 0.5, or just below / above it; R's rule
      # compares with a tolerance of 1.5e-8, and 1e-10 keeps clear of both the
      # tolerance and the rounding of S
      crafted <- list(inner = 0.5, inner_low = 0.5 - 1e-10, inner_out = 0.5 - 1e-6,
                      last_low = 0.5 - 1e-10, last_high = 0.5 + 1e-10)
      for (kind in names(crafted)) {
        k <- if (startsWith(kind, "inner")) steps[length(steps) %/% 2] else steps[length(steps)]
        x <- fit$means
        x[1] <- fit$means[1] + log(-log(crafted[[kind]]) / sf0$cumhaz[k]) / coef(fit)[1]
        rows[[length(rows) + 1]] <- list(kind = kind, x = x, s = s)
      }
    }
    entries <- c()
    for (r in rows) {
      nd <- as.data.frame(as.list(r$x))
      names(nd) <- m$covariates
      if (!is.null(m$strata)) nd[[m$strata]] <- r$s
      survfit_call <- "sf <- survfit(fit, newdata = nd)"
      quantile_call <- "quantile(sf, probs = 0.5, conf.int = FALSE)"
      sf <- survfit(fit, newdata = nd)
      med <- quantile(sf, probs = 0.5, conf.int = FALSE)
      entries <- c(entries, paste0(
        "{\"kind\": \"", r$kind, "\", \"x\": [", num(r$x), "], ",
        "\"stratum\": ", if (is.null(m$strata)) "null" else num(r$s), ", ",
        "\"median\": ", num(as.numeric(med)), ", ",
        "\"min_surv_minus_half\": ", num(min(abs(sf$surv - 0.5))), "}"))
    }
    every <- ""
    if (!is.null(m$strata)) {
      # newdata without the strata: R gives every stratum's curve of every row
      nd <- d[c(1, nrow(d) %/% 2), m$covariates, drop = FALSE]
      sf <- survfit(fit, newdata = nd)
      med <- quantile(sf, probs = 0.5, conf.int = FALSE)  # [stratum, row, prob]
      every <- paste0(
        "\"without_strata\": {\"x\": [", paste0("[", apply(as.matrix(nd), 1, num), "]",
                                                collapse = ", "), "], ",
        "\"strata\": [", num(strata_values), "], ",
        "\"survfit_call\": \"sf <- survfit(fit, newdata = nd)\", ",
        "\"quantile_call\": \"quantile(sf, probs = 0.5, conf.int = FALSE)[, , 1]\", ",
        "\"median\": [", paste0("[", apply(med[, , 1], 1, num), "]", collapse = ", "),
        "]}, ")
    }
    fits <- c(fits, paste0(
      "{\"name\": \"", m$name, "\", \"data\": \"", m$data, "\", \"ties\": \"", ties, "\", ",
      "\"time\": \"", m$time, "\", \"event\": \"", m$event, "\", ",
      "\"covariates\": [", paste0("\"", m$covariates, "\"", collapse = ", "), "], ",
      "\"strata\": ", if (is.null(m$strata)) "null" else paste0("\"", m$strata, "\""), ", ",
      "\"weights\": ", if (is.null(m$weights)) "null" else paste0("\"", m$weights, "\""), ", ",
      "\"fit_call\": \"", q(fit_call), "\", ", every,
      "\"newdata_call\": \"nd <- data.frame(<covariates> = x, <strata> = stratum)\", ",
      "\"survfit_call\": \"", q("sf <- survfit(fit, newdata = nd)"), "\", ",
      "\"quantile_call\": \"", q("quantile(sf, probs = 0.5, conf.int = FALSE)"), "\", ",
      "\"rows\": [", paste(entries, collapse = ", "), "]}"))
  }
}

writeLines(paste0(
  "{\"generator\": \"datasets/survival/make_median_reference.R, R ",
  R.version$major, ".", R.version$minor, ", survival ", packageVersion("survival"),
  "\", \"rule\": \"survival:::findq: first time with 1 - S >= 0.5 - tol and first with ",
  "1 - S >= 0.5 + tol (tol = sqrt(.Machine$double.eps)), their mean; NA when max(1 - S) < ",
  "0.5\", \"fits\": [", paste(fits, collapse = ",\n"), "]}"),
  "r_median_reference.json")
