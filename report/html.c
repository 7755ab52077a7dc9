#include "report.h"
void out_html(FILE *o, const struct rm_model *m, const struct thresholds *th) { (void)o; (void)m; (void)th; }
