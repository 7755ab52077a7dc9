/* Fingerprints into the command's slice (fingerprints.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/digest.h"
#include "common/map.h"
#include "device_model.h"
#include "emit.h"
#include "fingerprints.h"

typedef Perfetto__Protos__DebugAnnotation Ann;

struct stash { unsigned n; uint64_t v[CLT_FP_PER_COMMAND][FP_N]; };

void clt_fp_stash(struct clt_writer *w, const struct clt_rec *rec)
{
    struct clt_map *m = &w->dev->fps;
    uint64_t flow = rec->arg[FP_FLOW];
    struct stash *s = clt_map_get(m, flow);
    if (!s && (!(s = calloc(1, sizeof *s)) || clt_map_put(m, flow, s) != 0)) {
        free(s);
        return;
    }
    if (s->n < CLT_FP_PER_COMMAND)
        memcpy(s->v[s->n++], rec->arg, sizeof s->v[0]);
}

static Ann *field(struct clt_fp_anns *s, unsigned i, unsigned *nf, const char *name)
{
    Ann *x = &s->fields[i][*nf];
    perfetto__protos__debug_annotation__init(x);
    x->name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME;
    x->name = (char *)name;
    s->field_p[i][(*nf)++] = x;
    return x;
}
#define F_UINT(n, v) do { Ann *x_ = field(s, i, &nf, n); x_->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE; x_->uint_value = (v); } while (0)
#define F_INT(n, v) do { Ann *x_ = field(s, i, &nf, n); x_->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_INT_VALUE; x_->int_value = (v); } while (0)
#define F_DBL(n, v) do { Ann *x_ = field(s, i, &nf, n); x_->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_DOUBLE_VALUE; x_->double_value = (v); } while (0)
#define F_STR(n, v) do { Ann *x_ = field(s, i, &nf, n); x_->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE; x_->string_value = (char *)(v); } while (0)

static double dbl(uint64_t bits)
{
    double d;
    memcpy(&d, &bits, 8);
    return d;
}

/* The buffer's object id: from the enqueue's arguments as the writer saw
 * them then (the app may have released it since). */
static uint64_t buffer_id(struct clt_writer *w, const struct clt_flow *f, const uint64_t *v)
{
    if (f && v[FP_ARG] != UINT64_MAX && v[FP_ARG] < f->n_args)
        return f->args[v[FP_ARG]];
    if (f && v[FP_ARG] == UINT64_MAX && f->mem_id)
        return f->mem_id;
    return clt_dm_id_of(w, v[FP_MEM]);
}

unsigned clt_fp_annotate(struct clt_writer *w, uint64_t flow, const struct clt_flow *f, Ann *a, Ann **ap,
                         unsigned *na, struct clt_fp_anns *s)
{
    struct stash *st = clt_map_del(&w->dev->fps, flow);
    if (!st)
        return 0;
    Ann *x = clt_ann_new(a, ap, na, "fingerprint_command");
    x->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE;
    x->uint_value = st->v[0][FP_CMD_N];
    x = clt_ann_new(a, ap, na, "fingerprint_launch");
    x->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE;
    x->uint_value = st->v[0][FP_LAUNCH_N];
    Ann *list = clt_ann_new(a, ap, na, "fingerprints");
    list->n_array_values = st->n;
    list->array_values = s->item_p;
    for (unsigned i = 0; i < st->n; i++) {
        const uint64_t *v = st->v[i];
        unsigned nf = 0;
        Ann *it = &s->items[i];
        perfetto__protos__debug_annotation__init(it);
        s->item_p[i] = it;
        F_INT("arg", v[FP_ARG] == UINT64_MAX ? -1 : (int64_t)v[FP_ARG]);
        F_UINT("buffer", buffer_id(w, f, v));
        if (v[FP_OFFSET])
            F_UINT("offset", v[FP_OFFSET]);
        F_UINT("bytes", v[FP_BYTES]);
        F_STR("type", clt_elem_names[v[FP_ELEM] < CLT_ELEM_N ? v[FP_ELEM] : 0]);
        if ((int64_t)v[FP_STATUS] != 0) {
            F_INT("error", (int64_t)v[FP_STATUS]);     /* the readback failed: nothing known */
        } else {
            snprintf(s->hash[i], sizeof s->hash[i], "%016" PRIx64, v[FP_HASH]);
            F_STR("hash", s->hash[i]);
            if (v[FP_ELEM] != CLT_ELEM_BYTES) {
                F_UINT("nan", v[FP_NAN]);
                F_UINT("pos_inf", v[FP_POS_INF]);
                F_UINT("neg_inf", v[FP_NEG_INF]);
                F_UINT("denormal", v[FP_DENORMAL]);
                static const unsigned elem_bytes[CLT_ELEM_N] = { 1, 2, 4, 8 };
                if (v[FP_FIRST_NONFINITE] != UINT64_MAX)   /* an element of the buffer, not of the region */
                    F_UINT("first_nonfinite", v[FP_FIRST_NONFINITE] + v[FP_OFFSET] / elem_bytes[v[FP_ELEM]]);
                F_DBL("min", dbl(v[FP_MIN]));
                F_DBL("max", dbl(v[FP_MAX]));
                F_DBL("sum", dbl(v[FP_SUM]));
            }
        }
        it->n_dict_entries = nf;
        it->dict_entries = s->field_p[i];
    }
    unsigned n = st->n;
    free(st);
    return n;
}

void clt_fp_stash_free(struct clt_writer *w)
{
    clt_map_free_vals(&w->dev->fps);
}
