/* `cltrace-report --rules`: the rule table, as text, as the Markdown table
 * report/README.md holds (a test checks it is the same), or as JSON. */
#include <string.h>
#include "report/escape/escape.h"
#include "formats.h"

void format_rules(FILE *o, const char *format)
{
    int md = !strcmp(format, "markdown"), json = !strcmp(format, "json");
    if (md)
        fputs("| rule | severity | fires when | from |\n|---|---|---|---|\n", o);
    if (json)
        fputs("{\"schema\":\"cltrace-report-rules/1\",\"rules\":[", o);
    for (const struct rule *r = rule_table; r->id; r++) {
        if (md) {
            fprintf(o, "| `%s` | %s | ", r->id, sev_name[r->severity]);
            md_cell(o, r->fires);
            fputs(" | ", o);
            md_cell(o, r->source);
            fputs(" |\n", o);
        } else if (json) {
            fprintf(o, "%s{\"id\":\"%s\",\"severity\":\"%s\",\"fires\":", r == rule_table ? "" : ",", r->id,
                    sev_name[r->severity]);
            json_str(o, r->fires);
            fputs(",\"source\":", o);
            json_str(o, r->source);
            fputc('}', o);
        } else {
            fprintf(o, "%-24s %-8s %s%s%s%s\n", r->id, sev_name[r->severity], r->fires, r->source[0] ? " (" : "",
                    r->source, r->source[0] ? ")" : "");
        }
    }
    if (json)
        fputs("]}\n", o);
}
