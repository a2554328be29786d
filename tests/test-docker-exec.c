/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The exec API client and the relay against a real dockerd (tests/setup-docker.sh),
 * plus the stream demultiplexer on its own. Containers carry the label
 * sbx-test.run=<run id>; the teardown removes them even when a test failed. */

#include "json-path.h"
#include "sbx-test.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "docker-container.h"
#include "docker-exec.h"
#include "docker-relay.h"
#include "docker-stream.h"

#define TEST_IMAGE "xagent-sandbox-test:latest"

static char run_id[64];
static char container[128];

static SbxDocker *client(void) {
        SbxDocker *d = NULL;

        ck_assert_int_eq(sbx_docker_new(getenv("DOCKER_HOST"), &d, NULL), 0);
        return d;
}

/* Runs argv in the container as 1000:1000 and relays with r (sock filled in).
 * Returns the relay's result; the exit code in *ret_code. */
static int run(SbxDocker *d, char *const *argv, char *const *env, bool tty, SbxRelay *r, int *ret_code) {
        _cleanup_free_ char *id = NULL;
        SbxError e = SBX_ERROR_NULL;
        int q, fd = -1;

        ck_assert_msg(sbx_docker_exec_create(d, container, &(SbxExecConfig) {
                .argv = argv, .env = env, .user = "1000:1000", .tty = tty, .attach_stdin = true,
        }, &id, &e) == 0, "%s", e.message);
        ck_assert_msg(sbx_docker_exec_start(d, id, tty, &fd, &e) == 0, "%s", e.message);
        r->sock = fd;
        r->tty = tty;
        q = sbx_relay_run(r);
        if (q == 0)
                ck_assert_msg(sbx_docker_exec_wait(d, id, ret_code, &e) == 0, "%s", e.message);
        return q;
}

static SbxRelay capture(size_t limit) {
        SbxRelay r = SBX_RELAY_INIT;

        r.out[0].limit = r.out[1].limit = limit;
        return r;
}

START_TEST(test_capture) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = client();
        SbxRelay r = capture(1 << 20);
        int code = -1;

        ck_assert_int_eq(run(d, (char *[]) { "sh", "-c", "id -u; id -g; echo err >&2; echo $A; exit 3", NULL },
                             (char *[]) { "A=b c", NULL }, false, &r, &code), 0);
        ck_assert_int_eq(code, 3);
        ck_assert_str_eq(r.out[0].data, "1000\n1000\nb c\n");
        ck_assert_str_eq(r.out[1].data, "err\n");
        ck_assert(!r.out[0].truncated && !r.out[1].truncated);
        sbx_relay_done(&r);
}
END_TEST

START_TEST(test_stdin_and_limit) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = client();
        static char input[300000];
        SbxRelay r = capture(1000);
        int code = -1;

        memset(input, 'x', sizeof input);
        r.in_data = input;
        r.in_size = sizeof input;
        /* More input than any pipe holds, echoed back while it is still being written. */
        ck_assert_int_eq(run(d, (char *[]) { "cat", NULL }, NULL, false, &r, &code), 0);
        ck_assert_int_eq(code, 0);
        ck_assert_uint_eq(r.out[0].size, 1000);
        ck_assert(r.out[0].truncated);
        ck_assert_uint_eq(r.out[1].size, 0);
        sbx_relay_done(&r);
}
END_TEST

static void *count_bytes(void *p) {
        int fd = *(int *) p;
        static char buf[65536];
        size_t n = 0;
        ssize_t k;

        /* A wrong byte makes the count wrong (check's asserts are too slow per byte). */
        while ((k = read(fd, buf, sizeof buf)) > 0)
                for (ssize_t i = 0; i < k; i++)
                        n += buf[i] == 'y' ? 1 : 1000000000;
        return (void *) n;
}

/* 20 MB through a pipe read more slowly than it is written: all of it arrives. */
START_TEST(test_big_output_to_pipe) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = client();
        SbxRelay r = capture(0);
        int p[2], code = -1;
        pthread_t t;
        void *n;

        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        ck_assert_int_eq(pthread_create(&t, NULL, count_bytes, &p[0]), 0);
        r.out[0].fd = p[1];
        ck_assert_int_eq(run(d, (char *[]) { "sh", "-c", "yes y | tr -d '\\n' | head -c 20000000", NULL }, NULL,
                             false, &r, &code), 0);
        close(p[1]);
        ck_assert_int_eq(pthread_join(t, &n), 0);
        close(p[0]);
        ck_assert_int_eq(code, 0);
        ck_assert_uint_eq((size_t) n, 20000000);
        sbx_relay_done(&r);
}
END_TEST

START_TEST(test_tty_and_resize) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = client();
        _cleanup_free_ char *id = NULL;
        int fd = -1;
        SbxRelay r = capture(4096);
        SbxError e = SBX_ERROR_NULL;
        int code = -1;

        ck_assert_int_eq(sbx_docker_exec_create(d, container, &(SbxExecConfig) {
                .argv = (char *[]) { "sh", "-c", "sleep 0.3; stty size; tty; echo e >&2", NULL },
                .user = "1000:1000", .tty = true, .attach_stdin = true,
        }, &id, &e), 0);
        ck_assert_int_eq(sbx_docker_exec_start(d, id, true, &fd, &e), 0);
        ck_assert_msg(sbx_docker_exec_resize(d, id, 33, 101, &e) == 0, "%s", e.message);
        r.sock = fd;
        r.tty = true;
        ck_assert_int_eq(sbx_relay_run(&r), 0);
        ck_assert_int_eq(sbx_docker_exec_wait(d, id, &code, &e), 0);
        ck_assert_int_eq(code, 0);
        ck_assert_ptr_nonnull(r.out[0].data);
        ck_assert_msg(strstr(r.out[0].data, "33 101\r\n/dev/pts/") && strstr(r.out[0].data, "e\r\n"), "%s",
                      r.out[0].data);
        sbx_relay_done(&r);
}
END_TEST

/* The service's init, run as the same uid, signals the processes carrying the
 * exec's token, descendants included; the stream then ends. */
START_TEST(test_kill_by_token) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = client();
        SbxRelay r = capture(4096), k = capture(4096);
        int code = -1, kcode = -1;
        uint64_t t0 = sbx_now_monotonic_us();

        r.deadline_us = t0 + 1000000;
        ck_assert_int_eq(run(d, (char *[]) { "sh", "-c", "sleep 60 & sleep 61; echo not killed", NULL },
                             (char *[]) { "XAGENT_SANDBOX_EXEC=tok1", NULL }, false, &r, &code), -ETIME);
        ck_assert_int_eq(run(d, (char *[]) { "/.xagent-sandbox/xagent-sandbox-init", "--kill", "9", "tok1", NULL },
                             NULL, false, &k, &kcode), 0);
        ck_assert_int_eq(kcode, 0);
        r.deadline_us = sbx_now_monotonic_us() + 5000000;
        ck_assert_int_eq(sbx_relay_run(&r), 0);
        ck_assert_ptr_null(r.out[0].data);
        ck_assert_int_lt(sbx_now_monotonic_us() - t0, 5000000);
        /* nothing left: a second kill finds nobody */
        sbx_relay_done(&k);
        k = capture(4096);
        ck_assert_int_eq(run(d, (char *[]) { "/.xagent-sandbox/xagent-sandbox-init", "--kill", "9", "tok1", NULL },
                             NULL, false, &k, &kcode), 0);
        ck_assert_int_eq(kcode, 1);
        sbx_relay_done(&r);
        sbx_relay_done(&k);
}
END_TEST

/* Killed by signal N: Docker reports 128+N. */
START_TEST(test_signal_status) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = client();
        SbxRelay r = capture(4096);
        int code = -1;

        ck_assert_int_eq(run(d, (char *[]) { "sh", "-c", "kill -TERM $$", NULL }, NULL, false, &r, &code), 0);
        ck_assert_int_eq(code, 128 + 15);
        sbx_relay_done(&r);
}
END_TEST

START_TEST(test_refusals) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = client();
        _cleanup_free_ char *id = NULL;
        SbxError e = SBX_ERROR_NULL;
        int fd = -1;

        ck_assert_int_lt(sbx_docker_exec_create(d, "sbx-test-no-such-container", &(SbxExecConfig) {
                .argv = (char *[]) { "true", NULL }, .user = "1000:1000" }, &id, &e), 0);
        ck_assert_int_eq(e.kind, SBX_ERROR_DOCKER_NOT_FOUND);
        sbx_error_free(&e);
        ck_assert_int_lt(sbx_docker_exec_start(d, "0123456789abcdef", false, &fd, &e), 0);
        ck_assert_int_eq(e.kind, SBX_ERROR_DOCKER_NOT_FOUND);
        ck_assert_msg(strstr(e.message, "No such exec instance"), "%s", e.message);
        sbx_error_free(&e);
}
END_TEST

/* Any chunking of a multiplexed stream gives the same pieces. */
START_TEST(test_demux_chunks) {
        static const char stream[] = "\1\0\0\0\0\0\0\3abc\2\0\0\0\0\0\0\2de\1\0\0\0\0\0\0\0\1\0\0\0\0\0\0\1f";
        size_t size = sizeof stream - 1;

        for (size_t chunk = 1; chunk <= size; chunk++) {
                SbxDemux dm = SBX_DEMUX_INIT;
                char out[2][16] = {};
                size_t n[2] = {};

                for (size_t i = 0; i < size;) {
                        size_t len = MIN(chunk, size - i), j = 0;

                        while (j < len) {
                                const char *piece;
                                size_t piece_size;
                                unsigned stream_no = 0;
                                ssize_t k = sbx_demux_step(&dm, stream + i + j, len - j, &stream_no, &piece,
                                                           &piece_size);

                                ck_assert_int_gt(k, 0);
                                if (piece_size > 0) {
                                        memcpy(out[stream_no - 1] + n[stream_no - 1], piece, piece_size);
                                        n[stream_no - 1] += piece_size;
                                }
                                j += (size_t) k;
                        }
                        i += len;
                }
                ck_assert(sbx_demux_at_boundary(&dm));
                ck_assert_str_eq(out[0], "abcf");
                ck_assert_str_eq(out[1], "de");
        }
        {
                SbxDemux dm = SBX_DEMUX_INIT;
                const char *piece;
                size_t piece_size;
                unsigned s;

                ck_assert_int_eq(sbx_demux_step(&dm, "\3\0\0\0\0\0\0\1x", 9, &s, &piece, &piece_size), -EBADMSG);
        }
}
END_TEST

static void setup(void) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = NULL;
        _cleanup_(json_object_putp) json_object *body = NULL;
        _cleanup_free_ char *text = NULL, *id = NULL;
        SbxError e = SBX_ERROR_NULL;
        const char *build = getenv("SBX_BUILD_ROOT");

        ck_assert_int_eq(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
        ck_assert_ptr_nonnull(build);
        d = client();
        snprintf(container, sizeof container, "%s-exec", run_id);
        ck_assert_int_ge(asprintf(&text,
                "{\"Image\":\"" TEST_IMAGE "\",\"Entrypoint\":[\"/.xagent-sandbox/xagent-sandbox-init\"],"
                "\"User\":\"65534:65534\",\"Labels\":{\"sbx-test.run\":\"%s\"},"
                "\"HostConfig\":{\"CapDrop\":[\"ALL\"],\"SecurityOpt\":[\"no-new-privileges:true\"],"
                "\"Mounts\":[{\"Type\":\"bind\",\"Source\":\"%s/src/init\",\"Target\":\"/.xagent-sandbox\","
                "\"ReadOnly\":true}]}}", run_id, build), 0);
        body = json_tokener_parse(text);
        ck_assert_ptr_nonnull(body);
        ck_assert_msg(sbx_docker_container_create(d, container, body, &id, &e) == 0, "%s", e.message);
        ck_assert_msg(sbx_docker_container_start(d, id, &e) == 0, "%s", e.message);
}

static void teardown(void) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = client();

        (void) sbx_docker_container_remove(d, container, NULL);
        d = sbx_docker_free(d);
        curl_global_cleanup();
}

static Suite *make_suite(void) {
        Suite *s = suite_create("docker-exec");
        TCase *pure = tcase_create("demux"), *tc = tcase_create("real-daemon");

        snprintf(run_id, sizeof(run_id), "sbx-test-%d", (int) getpid());
        tcase_add_test(pure, test_demux_chunks);
        suite_add_tcase(s, pure);
        tcase_add_unchecked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_capture);
        tcase_add_test(tc, test_stdin_and_limit);
        tcase_add_test(tc, test_big_output_to_pipe);
        tcase_add_test(tc, test_tty_and_resize);
        tcase_add_test(tc, test_kill_by_token);
        tcase_add_test(tc, test_signal_status);
        tcase_add_test(tc, test_refusals);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
