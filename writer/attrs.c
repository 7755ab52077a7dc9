/* Trace attributes gathered before they are written (clt_attrs_put,
 * encode.c): filling the table only, so that the parts below the encoder
 * (the file's full-disk note, the own threads' facts) can say theirs. */
#include <stdio.h>
#include "emit.h"

void clt_attr_int(struct clt_attrs *a, const char *key, int64_t v)
{
    if (a->n == CLT_MAX_ATTRS)
        return;
    Perfetto__Protos__TraceAttributes__Attribute *x = &a->attr[a->n];
    perfetto__protos__trace_attributes__attribute__init(x);
    snprintf(a->key[a->n], sizeof a->key[a->n], "%s", key);
    x->key = a->key[a->n];
    x->value_case = PERFETTO__PROTOS__TRACE_ATTRIBUTES__ATTRIBUTE__VALUE_LONG_VALUE;
    x->long_value = v;
    a->ptr[a->n++] = x;
}

void clt_attr_str(struct clt_attrs *a, const char *key, const char *v)
{
    if (a->n == CLT_MAX_ATTRS)
        return;
    clt_attr_int(a, key, 0);
    Perfetto__Protos__TraceAttributes__Attribute *x = &a->attr[a->n - 1];
    x->value_case = PERFETTO__PROTOS__TRACE_ATTRIBUTES__ATTRIBUTE__VALUE_STRING_VALUE;
    x->string_value = (char *)v;
}
