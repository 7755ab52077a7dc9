/* CLT_REC_OVERRIDE records (override/: program hashes and what an override
 * did) as the trace shows them: an instant on the calling thread's track
 * (category cltrace.override), and trace attributes the report opens with:
 *   cltrace.program.ID    "HASH FILE KERNELS": each program built (its
 *                         object id; FILE the name --programs gives it)
 *   cltrace.override.N    "WHAT TEXT": source, options, local or failed,
 *                         each sentence once */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "emit.h"
#include "device_model.h"
#include "trace/record.h"

#define MAX_PROGRAMS 240
#define MAX_NOTES 64
static const char *const what_names[] = { "program", "source", "options", "local", "failed" };
static char programs[MAX_PROGRAMS][2 * CLT_MAX_STR + 32];
static uint64_t program_ids[MAX_PROGRAMS];
static unsigned n_programs;
static char notes[MAX_NOTES][CLT_MAX_STR + 16];
static unsigned n_notes;

void clt_override_emit(struct clt_writer *w, uint64_t thread_track, const struct clt_rec *rec)
{
    char file[CLT_MAX_STR + 1] = "", text[CLT_MAX_STR + 1] = "";
    const uint8_t *base = (const uint8_t *)rec;
    if (!(rec->raw_mask & (1u << OVR_FILE)))
        clt_text(file, base + (rec->arg[OVR_FILE] >> 32), rec->arg[OVR_FILE] & 0xFFFFFFFFu, 0, '?');
    if (!(rec->raw_mask & (1u << OVR_TEXT)))
        clt_text(text, base + (rec->arg[OVR_TEXT] >> 32), rec->arg[OVR_TEXT] & 0xFFFFFFFFu, 0, '?');
    unsigned what = rec->arg[OVR_WHAT] < 5 ? (unsigned)rec->arg[OVR_WHAT] : 4;
    uint64_t id = rec->arg[OVR_PROGRAM] ? clt_dm_id_of(w, rec->arg[OVR_PROGRAM]) : 0;
    Perfetto__Protos__DebugAnnotation a[5], *ap[5];
    unsigned na = 0;
    char hash[20];
    snprintf(hash, sizeof hash, "%016" PRIx64, rec->arg[OVR_HASH]);
    A_STR("what", what_names[what]);
    if (rec->arg[OVR_HASH])
        A_STR("program_hash", hash);
    if (id)
        A_UINT("program", id);
    if (file[0])
        A_STR("file", file);
    A_STR("text", text);
    char name[CLT_MAX_STR + 32];
    snprintf(name, sizeof name, "%s: %s", what == 0 ? "program" : "override", what == 0 ? file : text);
    clt_put_instant(w, thread_track, clt_clock_to_ns(&w->clock, rec->t0), name, ap, na, 0);
    if (what == 0) {
        if (n_programs < MAX_PROGRAMS) {
            program_ids[n_programs] = id;
            snprintf(programs[n_programs++], sizeof programs[0], "%s %s %s", hash, file, text);
        }
        return;
    }
    char note[sizeof notes[0]];
    snprintf(note, sizeof note, "%s %s", what_names[what], text);
    for (unsigned i = 0; i < n_notes; i++)
        if (!strcmp(notes[i], note))
            return;
    if (n_notes < MAX_NOTES)
        memcpy(notes[n_notes++], note, sizeof note);
}

void clt_overrides_attrs(struct clt_writer *w)
{
    static struct clt_attrs a;
    static char keys[MAX_PROGRAMS + MAX_NOTES][48];
    if (!n_programs && !n_notes)
        return;
    a.n = 0;
    unsigned k = 0;
    for (unsigned i = 0; i < n_programs; i++, k++) {
        snprintf(keys[k], sizeof keys[k], "cltrace.program.%" PRIu64, program_ids[i]);
        clt_attr_str(&a, keys[k], programs[i]);
    }
    for (unsigned i = 0; i < n_notes; i++, k++) {
        snprintf(keys[k], sizeof keys[k], "cltrace.override.%u", i);
        clt_attr_str(&a, keys[k], notes[i]);
    }
    clt_attrs_put(w, &a);
}

void clt_overrides_forget(void)
{
    n_programs = n_notes = 0;
}
