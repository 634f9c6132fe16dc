# Writes the survival data sets of this folder as numeric CSV files and records
# R's survival::coxph fits of them in r_reference.json, the independent reference
# that tests/test_cox_reference.py checks graphpar.CoxPH against.
#
# Run from this folder:  Rscript make_reference.R
# (R 4.2.2, survival 3.5.3 produced the committed files.)
library(survival)

num <- function(x) sprintf("%.17g", x)

# Writes 17 significant digits and reads the file back, so the fits below see
# exactly the values the CSV files hold.
write_csv <- function(df, name) {
  txt <- df
  for (k in seq_along(txt)) txt[[k]] <- sprintf("%.17g", txt[[k]])
  write.csv(txt, name, row.names = FALSE, quote = FALSE)
  read.csv(name)
}

# ---- data sets: complete cases, events coded 0/1, factors as integer codes ----
lung2 <- with(lung, data.frame(time = time, status = as.integer(status == 2), inst = inst,
                               age = age, sex = sex, ph_ecog = ph.ecog, ph_karno = ph.karno,
                               wt_loss = wt.loss))
lung2 <- lung2[complete.cases(lung2), ]
lung2 <- write_csv(lung2, "lung.csv")

vet2 <- with(veteran, data.frame(time = time, status = status, celltype = as.integer(celltype),
                                 trt = trt, karno = karno, diagtime = diagtime, age = age,
                                 prior = prior))
vet2 <- write_csv(vet2, "veteran.csv")

# veteran with times in years plus a relative jitter of 1e-12 on every other row:
# near-ties that R's default timefix = TRUE (aeqSurv) merges back into ties.
vety <- vet2
vety$time <- vety$time / 365.25 * (1 + ifelse(seq_len(nrow(vety)) %% 2 == 0, 1e-12, 0))
vety <- write_csv(vety, "veteran_years.csv")

ov2 <- with(ovarian, data.frame(futime = futime, fustat = fustat, age = age,
                                resid_ds = resid.ds, rx = rx, ecog_ps = ecog.ps))
ov2 <- write_csv(ov2, "ovarian.csv")

rats2 <- with(rats, data.frame(litter = litter, rx = rx, time = time, status = status,
                               female = as.integer(sex == "f")))
rats2$w <- 1 + (rats2$litter %% 3) / 2
rats2 <- write_csv(rats2, "rats.csv")

col2 <- subset(colon, etype == 2)
col2 <- with(col2, data.frame(time = time, status = status, rx_lev = as.integer(rx == "Lev"),
                              rx_lev5fu = as.integer(rx == "Lev+5FU"), sex = sex, age = age,
                              obstruct = obstruct, perfor = perfor, adhere = adhere,
                              nodes = nodes, differ = differ, extent = extent, surg = surg))
col2 <- col2[complete.cases(col2), ]
col2 <- write_csv(col2, "colon.csv")

pbc2 <- with(pbc[1:312, ], data.frame(time = time, death = as.integer(status == 2), age = age,
                                      edema = edema, log_bili = log(bili),
                                      log_albumin = log(albumin), log_protime = log(protime),
                                      trt = trt, sex = as.integer(sex == "f")))
pbc2 <- pbc2[complete.cases(pbc2), ]
pbc2 <- write_csv(pbc2, "pbc.csv")

# mgus2: R stops its Newton iteration (|1 - loglik_old / loglik_new| <= 1e-9) while the
# coefficients are still about 5e-7 (relative) from the maximum; an exact maximiser
# differs from R by that much, so this fit checks that the iteration is R's.
mgus3 <- with(mgus2, data.frame(futime = futime, death = death, age = age, hgb = hgb,
                                creat = creat, mspike = mspike, male = as.integer(sex == "M")))
mgus3 <- mgus3[complete.cases(mgus3), ]
mgus3 <- write_csv(mgus3, "mgus2.csv")

# ---- reference fits: each entry records the exact R call ----
models <- list(
  list(name = "lung", data = "lung.csv", d = "lung2", time = "time", event = "status",
       covariates = c("age", "sex", "ph_ecog", "ph_karno", "wt_loss")),
  list(name = "lung_strata_inst", data = "lung.csv", d = "lung2", time = "time",
       event = "status", covariates = c("age", "sex", "ph_ecog"), strata = "inst"),
  list(name = "lung_offset", data = "lung.csv", d = "lung2", time = "time", event = "status",
       covariates = c("sex", "ph_ecog"), offset = "0.01 * age"),
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
  list(name = "colon_death", data = "colon.csv", d = "col2", time = "time", event = "status",
       covariates = c("rx_lev", "rx_lev5fu", "sex", "age", "obstruct", "perfor", "adhere",
                      "nodes", "extent", "surg")),
  list(name = "colon_death_strata", data = "colon.csv", d = "col2", time = "time",
       event = "status", covariates = c("rx_lev", "rx_lev5fu", "age", "nodes", "extent"),
       strata = "differ"),
  list(name = "pbc", data = "pbc.csv", d = "pbc2", time = "time", event = "death",
       covariates = c("age", "edema", "log_bili", "log_albumin", "log_protime")),
  list(name = "mgus2", data = "mgus2.csv", d = "mgus3", time = "futime", event = "death",
       covariates = c("age", "hgb", "creat", "mspike", "male"))
)

out <- c()
for (m in models) {
  for (ties in c("efron", "breslow")) {
    for (pen in c(0, 1)) {
      if (pen > 0 && m$name != "lung" && m$name != "veteran_strata") next
      rhs <- if (pen > 0) {
        sprintf("ridge(%s, theta = %g, scale = FALSE)", paste(m$covariates, collapse = ", "), pen)
      } else {
        paste(m$covariates, collapse = " + ")
      }
      if (!is.null(m$strata)) rhs <- paste0(rhs, " + strata(", m$strata, ")")
      if (!is.null(m$offset)) rhs <- paste0(rhs, " + offset(", m$offset, ")")
      call <- sprintf("coxph(Surv(%s, %s) ~ %s, data = %s, ties = \"%s\"%s)",
                      m$time, m$event, rhs, m$d, ties,
                      if (is.null(m$weights)) "" else paste0(", weights = ", m$weights))
      fit <- eval(parse(text = call))
      # R switches to a robust variance for non-integer weights; record the
      # model-based one (naive.var), which is what graphpar reports.
      se <- sqrt(diag(if (is.null(fit$naive.var)) fit$var else fit$naive.var))
      entry <- paste0(
        "{\"name\": \"", m$name, "\", \"data\": \"", m$data, "\", \"ties\": \"", ties, "\", ",
        "\"penalizer\": ", pen, ", ",
        "\"time\": \"", m$time, "\", \"event\": \"", m$event, "\", ",
        "\"covariates\": [", paste0("\"", m$covariates, "\"", collapse = ", "), "], ",
        "\"strata\": ", if (is.null(m$strata)) "null" else paste0("\"", m$strata, "\""), ", ",
        "\"weights\": ", if (is.null(m$weights)) "null" else paste0("\"", m$weights, "\""), ", ",
        "\"offset\": ", if (is.null(m$offset)) "null" else paste0("\"", m$offset, "\""), ", ",
        "\"r_call\": \"", gsub("\"", "\\\\\"", call), "\", ",
        "\"coef\": [", paste(num(unname(coef(fit))), collapse = ", "), "], ",
        "\"se\": [", paste(num(unname(se)), collapse = ", "), "], ",
        "\"loglik\": ", num(fit$loglik[2]), ", ",
        "\"loglik_null\": ", num(fit$loglik[1]), ", ",
        "\"iter\": ", fit$iter[length(fit$iter)], ", ",
        "\"concordance\": ", num(unname(fit$concordance["concordance"])), "}")
      out <- c(out, entry)
    }
  }
}
header <- paste0("{\"generator\": \"Rscript make_reference.R (", R.version.string,
                 ", survival ", packageVersion("survival"), ")\",\n \"fits\": [\n  ")
writeLines(paste0(header, paste(out, collapse = ",\n  "), "\n]}"), "r_reference.json")
