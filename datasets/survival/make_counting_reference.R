# Counting-process (start, stop] references: writes heart.csv (Stanford heart transplant,
# survival::heart) and veteran_entry.csv (veteran.csv with a made-up delayed entry, case
# weight and offset), fits R's coxph(Surv(start, stop, event) ~ ...) on them and records
# the coefficients, model-based standard errors, log-likelihoods and two survfit curves
# per fit in r_counting_reference.json, each beside the exact R call.
# tests/test_cox_counting.py checks graphpar.CoxPH(...).fit(..., entry=start) against it.
#
# Run from this folder after make_reference.R:  Rscript make_counting_reference.R
# (R 4.2.2, survival 3.5.3 produced the committed files.)
library(survival)

num <- function(x) sprintf("%.17g", x)
nums <- function(x) paste0("[", paste(num(unname(x)), collapse = ", "), "]")
str1 <- function(x) if (is.null(x)) "null" else paste0("\"", gsub("\"", "\\\\\"", x), "\"")

write_csv <- function(df, name) {
  txt <- df
  for (k in seq_along(txt)) txt[[k]] <- sprintf("%.17g", txt[[k]])
  write.csv(txt, name, row.names = FALSE, quote = FALSE)
  read.csv(name)
}

# ---- data sets ----
heart2 <- with(heart, data.frame(start = start, stop = stop, event = event, age = age,
                                 year = year, surgery = surgery,
                                 transplant = as.integer(as.character(transplant)), id = id))
heart2 <- write_csv(heart2, "heart.csv")

# veteran.csv, left-truncated: entry = floor(time * (row mod 5) / 6) < time, a case
# weight w = 1 + (row mod 3) / 2 and an offset column off = 0.01 * age.
vet <- read.csv("veteran.csv")
k <- seq_len(nrow(vet))
vete <- data.frame(entry = floor(vet$time * (k %% 5) / 6), vet)
vete$w <- 1 + (k %% 3) / 2
vete$off <- 0.01 * vete$age
vete <- write_csv(vete, "veteran_entry.csv")

ctl <- "control = coxph.control(eps = 1e-12, toler.chol = 1e-14, iter.max = 100)"
models <- list(
  list(name = "heart", data = "heart.csv", d = "heart2", covariates = c("age", "year",
       "surgery", "transplant")),
  list(name = "heart_strata_surgery", data = "heart.csv", d = "heart2",
       covariates = c("age", "year", "transplant"), strata = "surgery"),
  list(name = "heart_offset", data = "heart.csv", d = "heart2",
       covariates = c("year", "surgery", "transplant"), offset = "age"),
  list(name = "veteran_entry", data = "veteran_entry.csv", d = "vete", start = "entry",
       stop = "time", event = "status", covariates = c("trt", "karno", "diagtime", "age",
       "prior")),
  list(name = "veteran_entry_strata_weights", data = "veteran_entry.csv", d = "vete",
       start = "entry", stop = "time", event = "status",
       covariates = c("trt", "karno", "diagtime", "prior"), strata = "celltype",
       weights = "w", offset = "off")
)

out <- c()
for (m in models) {
  start <- if (is.null(m$start)) "start" else m$start
  stop <- if (is.null(m$stop)) "stop" else m$stop
  event <- if (is.null(m$event)) "event" else m$event
  d <- get(m$d)
  for (ties in c("efron", "breslow")) {
    rhs <- paste(m$covariates, collapse = " + ")
    if (!is.null(m$strata)) rhs <- paste0(rhs, " + strata(", m$strata, ")")
    if (!is.null(m$offset)) rhs <- paste0(rhs, " + offset(", m$offset, ")")
    call <- sprintf("coxph(Surv(%s, %s, %s) ~ %s, data = %s, ties = \"%s\"%s, %s)",
                    start, stop, event, rhs, m$d, ties,
                    if (is.null(m$weights)) "" else paste0(", weights = ", m$weights), ctl)
    fit <- eval(parse(text = call))
    se <- sqrt(diag(if (is.null(fit$naive.var)) fit$var else fit$naive.var))
    # survival curves of two rows (the first and the middle one), one survfit call each
    rows <- c(1L, nrow(d) %/% 2L)
    curves <- c()
    for (i in rows) {
      nd <- d[i, , drop = FALSE]
      scall <- sprintf("survfit(fit, newdata = %s[%d, ])", m$d, i)
      sf <- survfit(fit, newdata = nd)
      curves <- c(curves, paste0(
        "{\"row\": ", i - 1L, ", \"survfit_call\": ", str1(scall),
        ", \"strata\": ", if (is.null(m$strata)) "null" else num(nd[[m$strata]]),
        ", \"time\": ", nums(sf$time), ", \"cumhaz\": ", nums(sf$cumhaz), "}"))
    }
    out <- c(out, paste0(
      "{\"name\": \"", m$name, "\", \"data\": \"", m$data, "\", \"ties\": \"", ties, "\", ",
      "\"entry\": \"", start, "\", \"time\": \"", stop, "\", \"event\": \"", event, "\", ",
      "\"covariates\": [", paste0("\"", m$covariates, "\"", collapse = ", "), "], ",
      "\"strata\": ", str1(m$strata), ", \"weights\": ", str1(m$weights), ", ",
      "\"offset\": ", str1(m$offset), ", \"r_call\": ", str1(call), ", ",
      "\"coef\": ", nums(coef(fit)), ", \"se\": ", nums(se), ", ",
      "\"loglik\": ", num(fit$loglik[2]), ", \"loglik_null\": ", num(fit$loglik[1]), ", ",
      "\"iter\": ", fit$iter, ", \"curves\": [", paste(curves, collapse = ", "), "]}"))
  }
}
gen <- sprintf("Rscript make_counting_reference.R (%s, survival %s)", R.version.string,
               as.character(packageVersion("survival")))
writeLines(c("{", paste0("\"generator\": ", str1(gen), ","), "\"fits\": [",
             paste(out, collapse = ",\n"), "]}"), "r_counting_reference.json")
