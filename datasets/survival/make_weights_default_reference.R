# R's default variance for non-integer case weights: coxph reports the robust
# (sandwich) variance in fit$var and keeps the model-based one in fit$naive.var
# (survival 3.5.3: robust = TRUE when the weights are not all integers). Records,
# for each exact R call, the coefficients, sqrt(diag(fit$var)) (se), sqrt(diag(
# fit$naive.var)) (se_model) and whether R chose the robust variance, in
# r_weights_default_reference.json, which tests/test_cox_robust.py checks
# graphpar.CoxPH's defaults against. Reads the CSV files of this folder as they are.
#
# Run from this folder:  Rscript make_weights_default_reference.R
library(survival)

num <- function(x) paste(sprintf("%.17g", x), collapse = ", ")
rats2 <- read.csv("rats.csv")
rats2$w_int <- round(rats2$w + 0.25)  # integer weights: R keeps the model-based variance
vete <- read.csv("veteran_entry.csv")
calls <- c(
  'coxph(Surv(time, status) ~ rx + female, data = rats2, ties = "efron", weights = w)',
  'coxph(Surv(time, status) ~ rx + female, data = rats2, ties = "breslow", weights = w)',
  'coxph(Surv(time, status) ~ rx + strata(female), data = rats2, ties = "efron", weights = w)',
  'coxph(Surv(time, status) ~ rx + female, data = rats2, ties = "efron", weights = w_int)',
  'coxph(Surv(entry, time, status) ~ trt + karno + diagtime + prior, data = vete, ties = "efron", weights = w)'
)
out <- c()
for (call in calls) {
  fit <- eval(parse(text = call))
  robust <- !is.null(fit$naive.var)
  naive <- if (robust) fit$naive.var else fit$var
  out <- c(out, paste0(
    "{\"r_call\": \"", gsub("\"", "\\\\\"", call), "\", \"robust\": ",
    if (robust) "true" else "false", ", \"coef\": [", num(coef(fit)), "], \"se\": [",
    num(sqrt(diag(fit$var))), "], \"se_model\": [", num(sqrt(diag(naive))), "]}"))
}
gen <- sprintf("Rscript make_weights_default_reference.R (%s, survival %s)", R.version.string,
               as.character(packageVersion("survival")))
writeLines(c("{", paste0("\"generator\": \"", gen, "\","), "\"fits\": [",
             paste(out, collapse = ",\n"), "]}"), "r_weights_default_reference.json")
