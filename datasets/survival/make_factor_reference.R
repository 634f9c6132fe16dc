# Records R's coxph fits with factor (categorical) covariates, formulas with
# interactions, the likelihood-ratio test and confidence intervals in
# r_factor_reference.json: the reference that tests/test_cox_frame.py and
# tests/test_cox_summary.py check graphpar.CoxPH's DataFrame/formula fits and
# summary against.
#
# Run from this folder:  Rscript make_factor_reference.R
# It writes veteran_factor.csv: survival's `veteran` data with `celltype` as its
# text labels (squamous, smallcell, adeno, large). read.csv(stringsAsFactors =
# TRUE) makes it a factor with the levels sorted (adeno first, the reference), as
# graphpar sorts a string column's levels. Every entry records the exact R call.
library(survival)

vf <- veteran[, c("time", "status", "trt", "celltype", "karno", "diagtime", "age", "prior")]
vf$celltype <- as.character(vf$celltype)
write.csv(vf, "veteran_factor.csv", row.names = FALSE, quote = FALSE)
vf <- read.csv("veteran_factor.csv", stringsAsFactors = TRUE)
vcode <- read.csv("veteran.csv")  # celltype as integer codes 1..4

num <- function(x) paste(sprintf("%.17g", x), collapse = ", ")
strs <- function(x) paste0("\"", x, "\"", collapse = ", ")
fits <- list(
  list(name = "celltype", data = "veteran_factor.csv",
       call = "coxph(Surv(time, status) ~ age + celltype + karno, data = vf)"),
  list(name = "celltype_breslow", data = "veteran_factor.csv",
       call = "coxph(Surv(time, status) ~ age + celltype + karno, data = vf, ties = \"breslow\")"),
  list(name = "interactions", data = "veteran_factor.csv",
       call = "coxph(Surv(time, status) ~ age + celltype + karno + karno:celltype + age:trt, data = vf)"),
  list(name = "no_main_effect", data = "veteran_factor.csv",
       call = "coxph(Surv(time, status) ~ karno + celltype:trt, data = vf)"),
  list(name = "integer_codes", data = "veteran.csv",
       call = "coxph(Surv(time, status) ~ age + factor(celltype) + karno, data = vcode)"),
  list(name = "strata_text", data = "veteran_factor.csv",
       call = "coxph(Surv(time, status) ~ age + karno + strata(celltype), data = vf)")
)
out <- character(0)
for (f in fits) {
  fit <- eval(parse(text = f$call))
  s <- summary(fit)
  s90 <- summary(fit, conf.int = 0.90)
  lt <- s$logtest
  out <- c(out, paste0(
    "  \"", f$name, "\": {\n",
    "    \"r_call\": \"", gsub("\"", "\\\\\"", f$call), "\",\n",
    "    \"data\": \"", f$data, "\",\n",
    "    \"names\": [", strs(names(coef(fit))), "],\n",
    "    \"coef\": [", num(coef(fit)), "],\n",
    "    \"se\": [", num(sqrt(diag(vcov(fit)))), "],\n",
    "    \"p\": [", num(s$coefficients[, "Pr(>|z|)"]), "],\n",
    "    \"lower_95\": [", num(s$conf.int[, "lower .95"]), "],\n",
    "    \"upper_95\": [", num(s$conf.int[, "upper .95"]), "],\n",
    "    \"lower_90\": [", num(s90$conf.int[, 3]), "],\n",
    "    \"upper_90\": [", num(s90$conf.int[, 4]), "],\n",
    "    \"loglik\": [", num(fit$loglik), "],\n",
    "    \"logtest_call\": \"summary(fit)$logtest\",\n",
    "    \"logtest\": [", num(lt), "],\n",
    "    \"aic_call\": \"AIC(fit)\",\n",
    "    \"aic\": ", sprintf("%.17g", AIC(fit)), "\n",
    "  }"))
}
writeLines(c("{", paste(out, collapse = ",\n"), "}"), "r_factor_reference.json")
