# Records how R orders a text covariate's levels, and the fits that follow, in
# r_level_order_reference.json. R's factor() sorts levels in the locale's collation
# (ICU's, or the C library's), which can differ from code-point order (Python's sort,
# patsy's and graphpar's) when levels start with punctuation or mix case. Same model,
# another reference level: tests/test_cox_frame.py checks that graphpar's fit is R's
# reparametrised, and that a pandas Categorical with R's levels gives R's coefficients.
#
# Run from this folder:  Rscript make_level_order_reference.R
# (R 4.2.2, survival 3.5.3, LC_COLLATE C.UTF-8 with ICU produced the committed file;
# the locale is recorded with the levels.)
library(survival)

vf <- read.csv("veteran_factor.csv")
# two text columns derived from veteran_factor.csv (the test derives them the same way)
vf$kgroup <- ifelse(vf$karno <= 50, "<=50", ifelse(vf$karno <= 70, "50-70", ">70"))
vf$cell <- c(adeno = "adeno", large = "Large", smallcell = "smallcell",
             squamous = "Squamous")[vf$celltype]

num <- function(x) paste(sprintf("%.17g", x), collapse = ", ")
strs <- function(x) paste0("\"", x, "\"", collapse = ", ")
fits <- list(
  list(name = "kgroup_cell", ties = "efron",
       call = "coxph(Surv(time, status) ~ age + kgroup + cell, data = vf)"),
  list(name = "kgroup_cell_breslow", ties = "breslow",
       call = "coxph(Surv(time, status) ~ age + kgroup + cell, data = vf, ties = \"breslow\")")
)
out <- character(0)
for (f in fits) {
  fit <- eval(parse(text = f$call))
  out <- c(out, paste0(
    "  \"", f$name, "\": {\n",
    "    \"r_call\": \"", gsub("\"", "\\\\\"", f$call), "\",\n",
    "    \"data\": \"veteran_factor.csv\",\n",
    "    \"derived\": \"kgroup <- ifelse(karno <= 50, '<=50', ifelse(karno <= 70, '50-70', '>70')); ",
    "cell <- c(adeno = 'adeno', large = 'Large', smallcell = 'smallcell', squamous = 'Squamous')[celltype]\",\n",
    "    \"ties\": \"", f$ties, "\",\n",
    "    \"locale_call\": \"Sys.getlocale('LC_COLLATE'); capabilities('ICU')\",\n",
    "    \"locale\": \"", Sys.getlocale("LC_COLLATE"), "\", \"icu\": ",
    tolower(as.character(capabilities("ICU"))), ",\n",
    "    \"levels_call\": \"levels(factor(vf$kgroup)); levels(factor(vf$cell))\",\n",
    "    \"kgroup_levels\": [", strs(levels(factor(vf$kgroup))), "],\n",
    "    \"cell_levels\": [", strs(levels(factor(vf$cell))), "],\n",
    "    \"names\": [", strs(names(coef(fit))), "],\n",
    "    \"coef\": [", num(coef(fit)), "],\n",
    "    \"se\": [", num(sqrt(diag(vcov(fit)))), "],\n",
    "    \"loglik\": [", num(fit$loglik), "]\n",
    "  }"))
}
writeLines(c("{", paste(out, collapse = ",\n"), "}"), "r_level_order_reference.json")
