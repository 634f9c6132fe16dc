# R's default variance for non-integer case weights: coxph reports the robust
# (sandwich) variance in fit$var and keeps the model-based one in fit$naive.var
# (survival 3.5.3: robust = TRUE when the weights are not all integers). Records,
# for each exact R call, the data set and columns it uses (as the other reference
# files of this folder do), the coefficients, sqrt(diag(fit$var)) (se),
# sqrt(diag(fit$naive.var)) (se_model) and whether R chose the robust variance, in
# r_weights_default_reference.json, which tests/test_cox_robust.py checks
# graphpar.CoxPH's defaults against. Reads the CSV files of this folder as they are.
#
# Run from this folder:  Rscript make_weights_default_reference.R
library(survival)

num <- function(x) paste(sprintf("%.17g", x), collapse = ", ")
str1 <- function(x) if (is.null(x)) "null" else paste0("\"", gsub("\"", "\\\\\"", x), "\"")
rats2 <- read.csv("rats.csv")
vete <- read.csv("veteran_entry.csv")
models <- list(
  list(name = "rats_w", data = "rats.csv", d = "rats2", covariates = c("rx", "female"),
       weights = "w"),
  list(name = "rats_w_strata", data = "rats.csv", d = "rats2", covariates = "rx",
       strata = "female", weights = "w"),
  # integer weights (the litter numbers): R keeps the model-based variance
  list(name = "rats_integer_w", data = "rats.csv", d = "rats2", covariates = c("rx", "female"),
       weights = "litter"),
  list(name = "veteran_entry_w", data = "veteran_entry.csv", d = "vete", time = "time",
       event = "status", entry = "entry", covariates = c("trt", "karno", "diagtime", "prior"),
       weights = "w")
)
out <- c()
for (m in models) {
  time <- if (is.null(m$time)) "time" else m$time
  event <- if (is.null(m$event)) "status" else m$event
  surv <- if (is.null(m$entry)) sprintf("Surv(%s, %s)", time, event) else
    sprintf("Surv(%s, %s, %s)", m$entry, time, event)
  rhs <- paste(m$covariates, collapse = " + ")
  if (!is.null(m$strata)) rhs <- paste0(rhs, " + strata(", m$strata, ")")
  for (ties in c("efron", "breslow")) {
    call <- sprintf("coxph(%s ~ %s, data = %s, ties = \"%s\", weights = %s)", surv, rhs, m$d,
                    ties, m$weights)
    fit <- eval(parse(text = call))
    robust <- !is.null(fit$naive.var)
    naive <- if (robust) fit$naive.var else fit$var
    out <- c(out, paste0(
      "{\"name\": \"", m$name, "\", \"data\": \"", m$data, "\", \"ties\": \"", ties, "\", ",
      "\"entry\": ", str1(m$entry), ", \"time\": \"", time, "\", \"event\": \"", event, "\", ",
      "\"covariates\": [", paste0("\"", m$covariates, "\"", collapse = ", "), "], ",
      "\"strata\": ", str1(m$strata), ", \"weights\": ", str1(m$weights), ", ",
      "\"offset\": null, \"cluster\": null, \"penalizer\": 0, \"r_call\": ", str1(call), ", ",
      "\"robust\": ", if (robust) "true" else "false", ", \"coef\": [", num(coef(fit)),
      "], \"se\": [", num(sqrt(diag(fit$var))), "], \"se_model\": [",
      num(sqrt(diag(naive))), "]}"))
  }
}
gen <- sprintf("Rscript make_weights_default_reference.R (%s, survival %s)", R.version.string,
               as.character(packageVersion("survival")))
writeLines(c("{", paste0("\"generator\": \"", gen, "\","), "\"fits\": [",
             paste(out, collapse = ",\n"), "]}"), "r_weights_default_reference.json")
