/* --format json: cltrace-report/1 for machines (fields are only added
 * within a schema version; report/README.md lists them). */
#include "report/escape/escape.h"
#include "report/model/describe.h"
#include "formats.h"

void json_job(FILE *o, const struct job_view *j)
{
    fputs(",\"job\":{\"ranks\":[", o);
    for (unsigned i = 0; i < j->n; i++) {
        const struct rank_row *r = &j->rows[i];
        fprintf(o, "%s{\"rank\":%d,\"host\":", i ? "," : "", r->rank);
        json_str(o, r->host);
        fputs(",\"file\":", o);
        json_str(o, r->file);
        fprintf(o, ",\"api_ms\":%.3f,\"device_ms\":%.3f,\"device_idle_ms\":%.3f,\"kernel_ms\":%.3f,\"transfer_mb\":%.3f,"
                "\"findings\":%u,\"rules\":", r->api_ms, r->device_ms, r->device_idle_ms, r->kernel_ms, r->transfer_mb,
                r->findings);
        json_str(o, r->rules);
        if (r->mpi_calls || r->clock_have[0] || r->clock_have[1]) {
            fprintf(o, ",\"mpi\":{\"calls\":%llu,\"in_mpi_ms\":%.3f,\"device_busy_ms\":%.3f,\"device_idle_ms\":%.3f,"
                    "\"idle_in_waits_ms\":%.3f", r->mpi_calls, r->mpi_ms, r->mpi_busy_ms, r->mpi_idle_ms,
                    r->mpi_wait_idle_ms);
            fputs(",\"functions\":[", o);
            for (unsigned f = 0; f < r->n_mpi_fn; f++)
                fprintf(o, "%s{\"name\":\"%s\",\"calls\":%llu,\"ms\":%.3f}", f ? "," : "", r->mpi_fn[f].name,
                        r->mpi_fn[f].calls, r->mpi_fn[f].ms);
            fputc(']', o);
            static const char *const when[2] = { "init", "finalize" };
            for (int w = 0; w < 2; w++)
                if (r->clock_have[w])
                    fprintf(o, ",\"clock_%s\":{\"offset_ns\":%lld,\"rtt_ns\":%lld}", when[w], r->clock_offset_ns[w],
                            r->clock_rtt_ns[w]);
            fputc('}', o);
        }
        fputc('}', o);
    }
    fputs("],\"imbalance\":{", o);
    for (unsigned k = 0; k < JOB_METRICS; k++) {
        const struct job_stat *s = &j->imbalance[k];
        fprintf(o, "%s\"%s\":{\"max\":%.3f,\"mean\":%.3f,\"ratio\":%.3f,\"rank\":%d}", k ? "," : "", s->name, s->max,
                s->mean, s->ratio, s->rank);
    }
    fprintf(o, "},\"slowest_rank\":%d,\"kernel\":", j->slowest->rank);
    json_str(o, j->kernel ? j->kernel : "");
    fprintf(o, ",\"kernel_extra_ms\":%.3f}", j->kernel_extra_ms);
}

static void api(FILE *o, const struct rm_model *m)
{
    fputs("\"api\":[", o);
    for (unsigned i = 0; i < m->n_api; i++) {
        const struct rm_api *a = &m->api[i];
        fprintf(o, "%s{\"name\":", i ? "," : "");
        json_str(o, a->name);
        fprintf(o, ",\"count\":%llu,\"errors\":%llu,\"total_ns\":%llu,\"mean_ns\":%llu,\"min_ns\":%llu,\"max_ns\":%llu,"
                   "\"timed\":%llu}", (unsigned long long)a->count, (unsigned long long)a->errors,
                (unsigned long long)a->total_ns, (unsigned long long)(a->count ? a->total_ns / a->count : 0),
                (unsigned long long)a->min_ns, (unsigned long long)a->max_ns, (unsigned long long)(a->count - a->untimed));
    }
    fputc(']', o);
}

static void timeline_and_kernels(FILE *o, const struct rm_model *m)
{
    char occ[400];
    occ_model_note(m, occ, sizeof occ);
    fprintf(o, ",\"occupancy_model\":");
    json_str(o, occ);
    const struct rm_timeline *tl = &m->tl;     /* the span gains are a share of */
    if (m->dt.unusable)     /* nothing derived from a device clock that cannot be true */
        fputs(",\"timeline\":{\"span_ns\":null,\"idle_ns\":null,\"kernel_ns\":null,\"transfer_ns\":null}", o);
    else
        fprintf(o, ",\"timeline\":{\"span_ns\":%llu,\"idle_ns\":%llu,\"kernel_ns\":%llu,\"transfer_ns\":%llu}",
                (unsigned long long)rm_timeline_span(tl), (unsigned long long)tl->idle_ns,
                (unsigned long long)tl->kernel_ns, (unsigned long long)tl->transfer_ns);
    fprintf(o, ",\"device_timing\":{\"usable\":%s,\"why\":", m->dt.unusable ? "false" : "true");
    json_str(o, m->dt.why);
    fputc('}', o);
    fprintf(o, ",\"small_transfers\":{\"below_bytes\":%llu,\"source\":", (unsigned long long)m->small_threshold);
    json_str(o, small_source(m));
    fputs("},\"kernels\":[", o);
    for (unsigned i = 0; i < m->n_kernels; i++) {
        const struct rm_kernel *k = &m->kernels[i];
        fprintf(o, "%s{\"name\":", i ? "," : "");
        json_str(o, k->name);
        char dev[32] = "null";
        if (!m->dt.unusable)
            snprintf(dev, sizeof dev, "%llu", (unsigned long long)k->device_ns);
        fprintf(o, ",\"launches\":%llu,\"device_ns\":%s,\"work_group_size\":%llu,\"local_null\":%s,\"work_groups\":%llu,"
                   "\"timed_launches\":%llu,\"extrapolated\":%s}",
                (unsigned long long)k->launches, dev, (unsigned long long)k->wg_size,
                k->local_null ? "true" : "false", (unsigned long long)k->work_groups, (unsigned long long)k->timed,
                k->untimed ? "true" : "false");
    }
    fputc(']', o);
    fputs(",\"programs\":[", o);      /* each program built: the file `cltrace --programs` names it */
    for (unsigned i = 0, n = 0; i < m->n_programs; i++) {
        if (!m->programs[i].file[0])
            continue;
        fprintf(o, "%s{\"id\":%llu,\"file\":", n++ ? "," : "", (unsigned long long)m->programs[i].id);
        json_str(o, m->programs[i].file);
        fputc('}', o);
    }
    fputc(']', o);
}

static void transfers(FILE *o, const struct rm_model *m)
{
    static const char *const dirs[RM_DIRS] = { "host_to_device", "device_to_host", "device_to_device", "fill" };
    fprintf(o, ",\"transfers\":{");
    for (int d = 0; d < RM_DIRS; d++) {
        uint64_t c = 0, b = 0, ns = 0;
        for (int k = 0; k < RM_BUCKETS; k++) {
            c += m->xfer.count[d][k];
            b += m->xfer.bytes[d][k];
            ns += m->xfer.ns[d][k];
        }
        if (m->dt.unusable)
            fprintf(o, "%s\"%s\":{\"count\":%llu,\"bytes\":%llu,\"ns\":null,\"gbps\":null,\"buckets\":[", d ? "," : "",
                    dirs[d], (unsigned long long)c, (unsigned long long)b);
        else
            fprintf(o, "%s\"%s\":{\"count\":%llu,\"bytes\":%llu,\"ns\":%llu,\"gbps\":%.3f,\"buckets\":[",
                    d ? "," : "", dirs[d], (unsigned long long)c, (unsigned long long)b, (unsigned long long)ns,
                    ns ? (double)b / (double)ns : 0.0);
        for (int k = 0; k < RM_BUCKETS; k++)
            fprintf(o, "%s{\"size\":\"%s\",\"count\":%llu,\"bytes\":%llu,\"ns\":%llu}", k ? "," : "", bucket_name[k],
                    (unsigned long long)m->xfer.count[d][k], (unsigned long long)m->xfer.bytes[d][k],
                    (unsigned long long)m->xfer.ns[d][k]);
        fputs("]}", o);
    }
    fputc('}', o);
}

/* A finding's "host": what the busiest thread ran in the device's idle
 * time (model/host.c), shares of that time in 0..1 */
static void host_json(FILE *o, const struct rm_model *m)
{
    const struct rm_host *h = &m->hostcpu;
    fprintf(o, ",\"host\":{\"idle_ns\":%llu,\"thread\":%u,\"on_cpu_share\":%.3f,\"samples\":%llu,\"top\":[",
            (unsigned long long)h->gap_ns, h->busiest_tid, h->on_cpu_share, (unsigned long long)h->busiest_samples);
    for (unsigned i = 0; i < h->n_top; i++) {
        fprintf(o, "%s{\"function\":", i ? "," : "");
        json_str(o, h->top[i].function);
        fprintf(o, ",\"where\":");
        json_str(o, h->top[i].where);
        fprintf(o, ",\"share\":%.3f,\"samples\":%llu}", h->top[i].share, (unsigned long long)h->top[i].samples);
    }
    fprintf(o, "],\"off_cpu\":[");
    for (unsigned i = 0; i < h->n_blocked; i++) {
        fprintf(o, "%s{\"call\":", i ? "," : "");
        json_str(o, h->blocked[i].name);
        fprintf(o, ",\"share\":%.3f}", h->blocked[i].share);
    }
    fputs("]}", o);
}

static void findings(FILE *o, const struct rm_model *m, const struct findings *fs)
{
    fprintf(o, ",\"findings\":[");
    for (unsigned i = 0; i < fs->n; i++) {
        const struct finding *f = &fs->v[i];
        fprintf(o, "%s{\"rule\":\"%s\",\"severity\":\"%s\",\"where\":", i ? "," : "", f->rule, sev_name[f->sev]);
        json_str(o, f->where);
        if (f->stack)
            stack_json(o, f->stack);
        if (f->library)
            fputs(",\"by_library\":true", o);
        fprintf(o, ",\"numbers\":");
        json_str(o, f->numbers);
        fprintf(o, ",\"fix\":");
        json_str(o, f->fix);
        fprintf(o, ",\"phase\":");
        json_str(o, f->phase >= 0 ? m->phases[f->phase].path : "");
        if (f->gain_ns >= 0) {
            fprintf(o, ",\"estimated_gain_ns\":%.0f,\"estimated_gain_percent\":%.2f,\"gain_method\":", f->gain_ns,
                    finding_gain_percent(m, f));
            json_str(o, f->gain_method);
        } else {
            fprintf(o, ",\"estimated_gain_ns\":null");
            if (f->gain_method[0]) {      /* why not */
                fprintf(o, ",\"gain_method\":");
                json_str(o, f->gain_method);
            }
        }
        if (f->class_id) {
            fprintf(o, ",\"class\":\"%s\",\"class_why\":", f->class_id);
            json_str(o, f->class_why);
        }
        if (f->host)
            host_json(o, m);
        fputc('}', o);
    }
    fputc(']', o);
}

/* What cltrace measured by sampling: the CPU samples (how many, what their
 * handlers took) and the light calls it timed (each stands for 64) */
static void sampled_costs_json(FILE *o, const struct rm_model *m)
{
    if (m->hostcpu.period_ns)
        fprintf(o, ",\"cpu_samples\":{\"period_ns\":%llu,\"samples\":%llu,\"lost\":%llu,\"handler_ns\":%llu}",
                (unsigned long long)m->hostcpu.period_ns, (unsigned long long)m->hostcpu.samples,
                (unsigned long long)m->hostcpu.lost, (unsigned long long)m->self.cpu_samples_ns);
    const struct rm_selfcost *c = &m->self;
    if (c->light_measured)      /* each stands for 64; those cut short lost the CPU inside the measure */
        fprintf(o, ",\"light_calls\":{\"measured\":%llu,\"measured_ns\":%llu,\"cut\":%llu,\"cut_ns\":%llu}",
                (unsigned long long)c->light_measured, (unsigned long long)c->light_measured_ns,
                (unsigned long long)c->light_cut, (unsigned long long)c->light_cut_ns);
    uint64_t profiled_ns, profiled = selfcost_profiling(m, &profiled_ns);
    if (profiled)       /* within device_timing_ns: the probe's price of profiling cltrace turned on */
        fprintf(o, ",\"profiling_turned_on\":{\"commands\":%llu,\"ns\":%llu}", (unsigned long long)profiled,
                (unsigned long long)profiled_ns);
}

/* "sampling_mode": budget (the default), fixed (--sample), all; the budget's figures */
static void sampling_mode(FILE *o, const struct rm_model *m)
{
    const struct rm_selfcost *c = &m->self;
    fputs(",\"sampling_mode\":", o);
    json_str(o, c->sampling_mode[0] ? c->sampling_mode : c->sampling[0] && strcmp(c->sampling, "off") ? "fixed" : "all");
    if (!strcmp(c->sampling_mode, "budget"))
        fprintf(o, ",\"budget\":{\"percent\":%g,\"spent_ns\":%llu,\"price_ns\":%llu,\"first\":%llu,"
                   "\"measured_ns\":%llu,\"estimated_commands\":%llu}", c->budget_percent,
                (unsigned long long)c->budget_spent_ns, (unsigned long long)c->budget_price_ns,
                (unsigned long long)c->budget_first, (unsigned long long)c->timing_measured_ns,
                (unsigned long long)m->estimated_commands);
}

static void selfcost(FILE *o, const struct rm_model *m, const struct cost_account *a)
{
    const struct rm_selfcost *c = &m->self;
    fprintf(o, ",\"self_cost\":{\"known\":%s", c->known ? "true" : "false");
    if (c->known) {
        char s[200];
        selfcost_line(m, a, s, sizeof s);
        fprintf(o, ",\"upper_ns\":%llu,\"self_ns\":%llu,\"hot_path_ns\":%llu,\"device_timing_ns\":%llu,\"waited_ns\":%llu,"
                   "\"calls_waited\":%llu,\"device_paced_wait_ns\":%llu,\"run_ns\":%llu,\"percent\":%.2f,"
                   "\"writer_cpu_ns\":%llu,\"collector_cpu_ns\":%llu,\"exit_wait_ns\":%llu,"
                   "\"exit_regs_wait_ns\":%llu,\"exit_regs_not_in\":%llu,\"sampling\":",
                (unsigned long long)a->upper_ns, (unsigned long long)c->self_ns, (unsigned long long)c->hot_ns, (unsigned long long)c->device_timing_ns,
                (unsigned long long)c->waited_ns, (unsigned long long)c->calls_waited,
                (unsigned long long)c->paced_wait_ns, (unsigned long long)c->run_ns,
                selfcost_percent(m), (unsigned long long)c->writer_cpu_ns, (unsigned long long)c->collector_cpu_ns,
                (unsigned long long)c->exit_wait_ns, (unsigned long long)c->exit_regs_wait_ns,
                (unsigned long long)c->exit_regs_not_in);
        json_str(o, c->sampling[0] ? c->sampling : "off"), sampling_mode(o, m);
        sampled_costs_json(o, m);
        if (c->exit_known)
            fprintf(o, ",\"total_ns\":%llu,\"load_ns\":%llu,\"exit_ns\":%llu,\"cpus\":%llu,\"cpus_busy_percent\":%.1f,"
                       "\"process_cpu_ns\":%llu",
                    (unsigned long long)selfcost_total_ns(m), (unsigned long long)c->load_ns,
                    (unsigned long long)c->exit_ns, (unsigned long long)c->cpus, selfcost_cpus_busy_percent(m),
                    (unsigned long long)c->process_cpu_ns);
        if (c->sched_known)
            fprintf(o, ",\"competing_ns\":%llu,\"app_cpus_wanted\":%.3f,\"app_wait_per_cpu\":%.4f,"
                       "\"sched_own_cpu_ns\":%llu,\"sched_app_cpu_ns\":%llu,\"sched_app_wait_ns\":%llu,"
                       "\"sched_span_ns\":%llu",
                    (unsigned long long)selfcost_competing_ns(m), selfcost_app_cpus_wanted(m),
                    selfcost_app_wait_per_cpu(m),
                    (unsigned long long)c->sched_own_cpu_ns, (unsigned long long)c->sched_app_cpu_ns,
                    (unsigned long long)c->sched_app_wait_ns, (unsigned long long)c->sched_span_ns);
        if (c->runs_known) {     /* not counted: said (selfcost.c, wakeups_clause) */
            fprintf(o, ",\"sched_own_runs\":%llu,\"sched_app_runs\":%llu,\"hypervisor\":%s",
                    (unsigned long long)c->sched_own_runs, (unsigned long long)c->sched_app_runs,
                    c->hypervisor ? "true" : "false");
            if (c->wakeups_known)
                fprintf(o, ",\"sched_own_wakeups\":%llu", (unsigned long long)c->sched_own_wakeups);
            if (c->cpuidle_driver[0]) {
                fprintf(o, ",\"cpuidle_driver\":");
                json_str(o, c->cpuidle_driver);
            }
            if (c->halt_poll_known)
                fprintf(o, ",\"guest_halt_poll_ns\":%llu", (unsigned long long)c->guest_halt_poll_ns);
        }
        if (c->own_priority[0]) {
            fprintf(o, ",\"own_threads_priority\":");
            json_str(o, c->own_priority);
            if (c->own_normal_why[0]) {
                fprintf(o, ",\"own_threads_normal_why\":");
                json_str(o, c->own_normal_why);
            }
            if (c->own_lifted[0]) {
                fprintf(o, ",\"own_threads_lifted\":");
                json_str(o, c->own_lifted);
                fprintf(o, ",\"own_threads_lifted_at_ns\":%llu,\"own_threads_lifts\":%llu",
                        (unsigned long long)c->own_lifted_at_ns, (unsigned long long)c->own_lifts);
            }
        }
        fprintf(o, ",\"text\":");
        json_str(o, s);
    }
    fputc('}', o);
}

static void devices(FILE *o, const struct rm_model *m)
{
    fprintf(o, ",\"devices\":[");
    for (unsigned i = 0; i < m->n_dev; i++) {
        const struct rm_device *d = &m->dev[i];
        fprintf(o, "%s{\"name\":", i ? "," : "");
        json_str(o, d->name);
        fprintf(o, ",\"device_type\":%lld,\"clock_method\":", (long long)d->type);
        json_str(o, d->clock_method);
        fprintf(o, ",\"clock_residual_ns\":%lld,\"clock_residual_median_ns\":%lld,\"clock_floor_ns\":%lld,"
                   "\"clock_markers\":%lld,\"clock_contradictions\":%lld,\"event_cost_ns\":%lld,\"own_events\":%lld,"
                   "\"sampled_out\":%lld,\"idle_starts\":%lld,\"idle_start_ns\":%lld,\"idle_start_quick_ns\":%lld,"
                   "\"idle_start_median_ns\":%lld,\"idle_start_excess_ns\":%lld}", (long long)d->clock_residual_ns,
                (long long)d->clock_residual_median_ns, (long long)d->clock_floor_ns, (long long)d->clock_markers,
                (long long)d->clock_contradictions, (long long)d->event_cost_ns, (long long)d->own_events,
                (long long)d->sampled_out, (long long)d->idle_starts, (long long)d->idle_start_ns,
                (long long)d->idle_start_quick_ns, (long long)d->idle_start_median_ns,
                (long long)d->idle_start_excess_ns);
    }
    fputc(']', o);
}

/* "mpi": this trace's MPI calls against its device (model/mpi.c), where it made any */
static void mpi(FILE *o, const struct rm_model *m)
{
    const struct rm_mpi *x = &m->mpi;
    if (!x->calls)
        return;
    fprintf(o, ",\"mpi\":{\"calls\":%llu,\"in_mpi_ns\":%llu,\"device_busy_ns\":%llu,\"device_idle_ns\":%llu,"
            "\"idle_in_waits_ns\":%llu,\"functions\":[", (unsigned long long)x->calls, (unsigned long long)x->in_mpi_ns,
            (unsigned long long)x->busy_ns, (unsigned long long)x->idle_ns, (unsigned long long)x->wait_idle_ns);
    for (unsigned i = 0; i < x->n_fns; i++)
        fprintf(o, "%s{\"name\":\"%s\",\"calls\":%llu,\"ns\":%llu,\"bytes\":%llu}", i ? "," : "", x->fns[i].name,
                (unsigned long long)x->fns[i].calls, (unsigned long long)x->fns[i].ns,
                (unsigned long long)x->fns[i].bytes);
    fputs("]}", o);
}

static void phases(FILE *o, const struct rm_model *m, const struct phase_view *v)
{
    fputs(",\"phases\":[", o);
    for (unsigned i = 0; i < m->n_phases; i++) {
        const struct rm_phase *p = &m->phases[i];
        fprintf(o, "%s{\"name\":", i ? "," : "");
        json_str(o, p->name);
        fputs(",\"path\":", o);
        json_str(o, p->path);
        fprintf(o, ",\"parent\":%d,\"times\":%llu,\"wall_ns\":%llu,\"calls\":%llu,\"api_ns\":%llu,\"api_pct\":%.2f,"
                   "\"device_ns\":%llu,\"device_pct\":%.2f,\"kernel_ns\":%llu,\"transfers\":%llu,\"transfer_bytes\":%llu,"
                   "\"errors\":%llu,\"findings\":%u}",
                p->parent, (unsigned long long)p->entered, (unsigned long long)p->wall_ns,
                (unsigned long long)p->calls, (unsigned long long)p->api_ns, v->api_pct[i],
                (unsigned long long)p->device_ns, v->device_pct[i], (unsigned long long)p->kernel_ns,
                (unsigned long long)p->transfers, (unsigned long long)p->transfer_bytes,
                (unsigned long long)p->errors, v->findings[i]);
    }
    fputc(']', o);
}

/* "device_memory": the peak of the buffers the program held and which held
 * it (null: no buffer made). */
static void json_memory(FILE *o, const struct rm_model *m, const struct memory_view *v)
{
    if (!v->peak_bytes) {
        fputs(",\"device_memory\":null", o);
        return;
    }
    fprintf(o, ",\"device_memory\":{\"peak_bytes\":%llu,\"peak_at_ns\":%llu,\"buffers\":%llu,\"held_at_peak\":%u,"
               "\"untracked\":%llu,\"global_mem_bytes\":%llu,\"percent_of_global\":%.2f,\"near_limit\":%s,\"objects\":[",
            (unsigned long long)v->peak_bytes, (unsigned long long)v->peak_at_ns, (unsigned long long)v->buffers,
            v->n_held, (unsigned long long)v->untracked, (unsigned long long)v->global_bytes, v->percent,
            v->near_limit ? "true" : "false");
    for (unsigned i = 0; i < v->n_held && i < MEMORY_HELD; i++) {
        const struct rm_buffer *b = &v->held[i];
        const char *site = b->site > 0 && (unsigned)b->site <= m->n_sites ? m->sites[b->site - 1].site : "";
        fprintf(o, "%s{\"object\":%llu,\"bytes\":%llu,\"made_at_ns\":%llu,\"where\":", i ? "," : "",
                (unsigned long long)b->id, (unsigned long long)b->bytes,
                (unsigned long long)(b->made > m->mem.first_ts ? b->made - m->mem.first_ts : 0));
        json_str(o, site);
        fputc('}', o);
    }
    fputs("]}", o);
}

/* "summary": the first screen's figures, for a CI step that prints its own. */
static void summary(FILE *o, const struct report_in *r)
{
    const struct summary_view *v = r->sum;
    fputs("\"summary\":{\"program\":", o);
    json_str(o, v->program);
    fprintf(o, ",\"wall_ns\":%llu,\"findings\":{\"error\":%u,\"warning\":%u,\"info\":%u}",
            (unsigned long long)v->wall_ns, v->by_sev[SEV_ERROR], v->by_sev[SEV_WARNING], v->by_sev[SEV_INFO]);
    if (v->device_known)
        /* estimated: untimed launches drawn; shortened: of them, drawn shorter than sized to fit
         * between timed ones, and by how much (the kernels' times count them as sized);
         * timed_by_callbacks: a CPU device's, a short kernel's time an upper bound */
        fprintf(o, ",\"device\":{\"span_ns\":%llu,\"busy_percent\":%.2f,\"kernel_ns\":%llu,\"transfer_ns\":%llu,"
                   "\"idle_ns\":%llu,\"launches\":%llu,\"transfers\":%llu,\"estimated\":%llu,\"shortened\":%llu,"
                   "\"shortened_ns\":%llu,\"timed_by_callbacks\":%s}",
                (unsigned long long)v->span_ns, v->busy_pct, (unsigned long long)v->kernel_ns,
                (unsigned long long)v->transfer_ns, (unsigned long long)v->idle_ns, (unsigned long long)v->launches,
                (unsigned long long)v->transfers, (unsigned long long)r->m->estimated_commands,
                (unsigned long long)r->m->shortened_commands, (unsigned long long)r->m->shortened_ns,
                r->m->self.queues_by_callbacks ? "true" : "false");
    else
        fprintf(o, ",\"device\":null");
    fputs(",\"device_timing_unusable\":", o);
    json_str(o, v->device_unusable ? v->device_unusable : "");
    fprintf(o, ",\"launches_timed\":%llu", (unsigned long long)v->timed_launches);   /* < launches: sampled */
    fputs(",\"overrides\":[", o);             /* what cltrace --override, --options, --local changed */
    for (unsigned i = 0; i < r->m->n_overrides; i++) {
        fputs(i ? ",{\"what\":" : "{\"what\":", o);
        json_str(o, r->m->overrides[i].what);
        fputs(",\"text\":", o);
        json_str(o, r->m->overrides[i].text);
        fputc('}', o);
    }
    fputc(']', o);
    fputs(",\"sampling\":", o);
    json_str(o, v->sampling);
    json_memory(o, r->m, &v->memory);
    fputs(",\"devices\":[", o);          /* each physical device once: ranks sharing one, its union */
    for (unsigned i = 0; i < v->n_devices; i++) {
        const struct rm_devbusy *d = &r->m->devs[i];
        fprintf(o, "%s{\"name\":", i ? "," : "");
        json_str(o, d->name);
        fputs(",\"host\":", o);
        json_str(o, d->host);
        fputs(",\"uuid\":", o);
        json_str(o, d->uuid);
        fputs(",\"ranks\":", o);
        json_str(o, d->ranks);
        fprintf(o, ",\"traces\":%u,\"span_ns\":%llu,\"busy_ns\":%llu,\"kernel_ns\":%llu,\"transfer_ns\":%llu,"
                   "\"launches\":%llu,\"transfers\":%llu}", d->n_traces, (unsigned long long)(d->last - d->first),
                (unsigned long long)d->busy_ns, (unsigned long long)d->kernel_ns, (unsigned long long)d->transfer_ns,
                (unsigned long long)d->launches, (unsigned long long)d->transfers);
    }
    fputc(']', o);
    if (r->m->self.exit_by[0]) {
        fputs(",\"ended_by\":", o);
        json_str(o, r->m->self.exit_by);
        if (r->m->self.exit_status)
            fprintf(o, ",\"exit_status\":%d", r->m->self.exit_status - 1);
    }
    fputs(",\"top\":[", o);
    for (unsigned i = 0; i < v->n_top; i++) {
        const struct finding *f = &r->fs->v[v->top[i]];
        fprintf(o, "%s{\"rule\":\"%s\",\"severity\":\"%s\",\"where\":", i ? "," : "", f->rule, sev_name[f->sev]);
        json_str(o, f->where);
        if (f->gain_ns >= 0)
            fprintf(o, ",\"estimated_gain_ns\":%.0f}", f->gain_ns);
        else
            fputs(",\"estimated_gain_ns\":null}", o);
    }
    fputc(']', o);
    if (v->cost.known)
        fprintf(o, ",\"self_cost_ns\":%llu,\"self_cost_percent\":%.2f,\"self_cost_upper_ns\":%llu,"
                   "\"self_cost_upper_percent\":%.2f", (unsigned long long)v->cost.figure_ns, v->cost.percent,
                (unsigned long long)v->cost.upper_ns, v->cost.upper_percent);
    fputs("},", o);
}

void format_json(FILE *o, const struct report_in *r)
{
    const struct rm_model *m = r->m;
    fprintf(o, "{\"schema\":\"cltrace-report/1\",\"truncated\":%s,\"packets\":%llu,",
            rm_cut_short(m) ? "true" : "false", (unsigned long long)m->packets);
    if (m->disk_full[0]) {
        fputs("\"disk_full\":", o);
        json_str(o, rm_cut_short(m));
        fputc(',', o);
    }
    if (m->ring_dropped_bytes)   /* CLTRACE_RING_MB: the trace holds the run's end */
        fprintf(o, "\"flight_recorder\":{\"held_bytes\":%llu,\"dropped_bytes\":%llu},",
                (unsigned long long)m->ring_bytes, (unsigned long long)m->ring_dropped_bytes);
    if (m->n_windows) {     /* CLTRACE_WINDOW: what the figures below cover */
        fprintf(o, "\"windows\":{\"count\":%u,\"recorded_ns\":%llu,\"spans_ns\":", m->n_windows,
                (unsigned long long)m->window_ns);
        json_str(o, m->windows);
        fputs("},", o);
    }
    summary(o, r);
    api(o, m);
    timeline_and_kernels(o, m);
    transfers(o, m);
    findings(o, m, r->fs);
    selfcost(o, m, &r->sum->cost);
    devices(o, m);
    phases(o, m, r->phases);
    mpi(o, m);
    if (r->job)
        json_job(o, r->job);
    fprintf(o, "}\n");
}
