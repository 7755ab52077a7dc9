/* cltrace-view TRACE: serve one trace to ui.perfetto.dev from 127.0.0.1.
 *
 * Prints (and, with a desktop, opens) https://ui.perfetto.dev/#!/?url=...,
 * answers the browser's CORS and private-network preflight, sends the file
 * once, and exits when it has been sent or after --timeout seconds. The UI
 * only fetches from http://127.0.0.1:9001 (its content security policy), so
 * that is the default port; nothing listens beyond the loopback address. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define UI "https://ui.perfetto.dev"

static void usage(FILE *f)
{
    fprintf(f, "usage: cltrace-view [--no-open] [--timeout SECONDS] [--port N] TRACE\n\n"
               "Serves TRACE (.pftrace or .pftrace.gz) on 127.0.0.1 and prints the link that opens it\n"
               "in %s; exits once the UI has fetched it (status 0) or after the timeout\n"
               "(default 120 s, status 1). The UI fetches only from port 9001 (the default).\n", UI);
}

static int send_all(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

/* CORS for the UI's origin, and Chrome's private network access (a public
 * https page reading from 127.0.0.1). */
static const char cors[] = "Access-Control-Allow-Origin: " UI "\r\n"
                           "Access-Control-Allow-Methods: GET, OPTIONS\r\n"
                           "Access-Control-Allow-Headers: *\r\n"
                           "Access-Control-Allow-Private-Network: true\r\n"
                           "Cache-Control: no-store\r\n";

/* One request on fd: 1 if the trace was sent whole, 0 otherwise. */
static int serve(int fd, const char *path, const char *name, off_t size)
{
    char req[4096];
    size_t n = 0;
    req[0] = 0;
    while (n < sizeof req - 1 && !strstr(req, "\r\n\r\n")) {
        struct pollfd p = { fd, POLLIN, 0 };
        if (poll(&p, 1, 5000) <= 0)
            return 0;
        ssize_t r = recv(fd, req + n, sizeof req - 1 - n, 0);
        if (r <= 0)
            return 0;
        n += (size_t)r;
        req[n] = 0;
    }
    char method[16] = "", target[1024] = "";
    if (sscanf(req, "%15s %1023s", method, target) != 2)
        return 0;
    char hdr[1024];
    if (strcmp(method, "OPTIONS") == 0) {
        int h = snprintf(hdr, sizeof hdr, "HTTP/1.1 204 No Content\r\n%sContent-Length: 0\r\nConnection: close\r\n\r\n",
                         cors);
        send_all(fd, hdr, (size_t)h);
        return 0;
    }
    if (strcmp(method, "GET") != 0 || target[0] != '/' || strcmp(target + 1, name) != 0) {
        static const char nf[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        send_all(fd, nf, sizeof nf - 1);
        return 0;
    }
    int in = open(path, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return 0;
    int h = snprintf(hdr, sizeof hdr,
                     "HTTP/1.1 200 OK\r\n%sContent-Type: application/octet-stream\r\nContent-Length: %lld\r\n"
                     "Connection: close\r\n\r\n", cors, (long long)size);
    int ok = send_all(fd, hdr, (size_t)h) == 0;
    off_t off = 0;
    while (ok && off < size) {
        ssize_t s = sendfile(fd, in, &off, (size_t)(size - off));
        if (s < 0 && errno == EINTR)
            continue;
        ok = s > 0;
    }
    close(in);
    return ok && off == size;
}

/* The name the URL carries: the file's own where it is plain, else
 * trace.pftrace (.gz where it is gzip). */
static const char *url_name(const char *path, off_t size, char *copy, size_t cap)
{
    snprintf(copy, cap, "%s", path);
    const char *name = basename(copy);
    for (const char *c = name; *c; c++)
        if (!(((*c | 32) >= 'a' && (*c | 32) <= 'z') || (*c >= '0' && *c <= '9') || strchr("._-", *c))) {
            name = "trace.pftrace";        /* the URL carries only a plain name */
            break;
        }
    if (strcmp(name, "trace.pftrace") == 0 && size > 2) {
        int fd = open(path, O_RDONLY);
        unsigned char magic[2] = { 0, 0 };
        if (fd >= 0 && read(fd, magic, 2) == 2 && magic[0] == 0x1f && magic[1] == 0x8b)
            name = "trace.pftrace.gz";
        if (fd >= 0)
            close(fd);
    }
    return name;
}

int main(int argc, char **argv)
{
    int open_browser = 1, port = 9001;
    long timeout = 120;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--no-open"))
            open_browser = 0;
        else if (!strcmp(argv[i], "--timeout") && i + 1 < argc)
            timeout = strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--port") && i + 1 < argc)
            port = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] != '-' && !path)
            path = argv[i];
        else {
            usage(stderr);
            return 2;
        }
    }
    struct stat st;
    if (!path || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
        fprintf(stderr, "cltrace-view: %s: %s\n", path ? path : "no trace given", path ? strerror(errno ? errno : EINVAL) : "");
        return 2;
    }
    char copy[4096];
    const char *name = url_name(path, st.st_size, copy, sizeof copy);
    int srv = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(srv, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);        /* 127.0.0.1 only */
    if (srv < 0 || bind(srv, (struct sockaddr *)&a, sizeof a) != 0 || listen(srv, 8) != 0) {
        fprintf(stderr, "cltrace-view: cannot listen on 127.0.0.1:%d: %s\n", port, strerror(errno));
        return 2;
    }
    char url[4200];
    snprintf(url, sizeof url, UI "/#!/?url=http://127.0.0.1:%d/%s", port, name);
    printf("%s\n", url);
    fflush(stdout);
    if (open_browser && (getenv("DISPLAY") || getenv("WAYLAND_DISPLAY"))) {
        pid_t pid = fork();
        if (pid == 0) {
            int null = open("/dev/null", O_RDWR);
            dup2(null, 1);
            dup2(null, 2);
            execlp("xdg-open", "xdg-open", url, (char *)NULL);
            _exit(127);
        }
    }
    signal(SIGCHLD, SIG_IGN);
    time_t end = time(NULL) + timeout;
    while (time(NULL) < end) {
        struct pollfd p = { srv, POLLIN, 0 };
        int left = (int)(end - time(NULL));
        if (poll(&p, 1, (left > 0 ? left : 0) * 1000) <= 0)
            continue;
        int c = accept4(srv, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0)
            continue;
        int done = serve(c, path, name, st.st_size);
        close(c);
        if (done) {
            fprintf(stderr, "cltrace-view: the UI fetched %s (%lld bytes)\n", path, (long long)st.st_size);
            return 0;
        }
    }
    fprintf(stderr, "cltrace-view: nobody fetched the trace in %ld s; open the link above, or the file itself "
                    "in %s (Open trace file)\n", timeout, UI);
    return 1;
}
