/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Streamed answers (the event stream): one GET with no time limit, stoppable from
 * any thread. */

#include <curl/curl.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>

#include "docker.h"
#include "docker-internal.h"

typedef struct Stream {
        SbxDocker *d;
        SbxDockerStreamData on_data;
        void (*on_connected)(void *userdata);
        void *userdata;
        SbxDockerStop *stop;
        bool connected;
        bool aborted;           /* on_data said stop */
        long status;
        char refusal[DOCKER_MESSAGE_MAX];      /* the start of a refusal's body */
        size_t refusal_size;
} Stream;

static size_t stream_write(char *ptr, size_t size, size_t nmemb, void *userdata) {
        Stream *s = userdata;
        size_t n = size * nmemb, k;

        if (s->status == 0)
                (void) curl_easy_getinfo(s->d->curl, CURLINFO_RESPONSE_CODE, &s->status);
        if (s->status == 200) {
                if (!s->on_data(ptr, n, s->userdata)) {
                        s->aborted = true;
                        return 0;
                }
                return n;
        }
        k = MIN(n, sizeof s->refusal - 1 - s->refusal_size);
        memcpy(s->refusal + s->refusal_size, ptr, k);
        s->refusal_size += k;
        return n;
}

/* Called at least once a second while the stream is open, data or not. */
static int stream_progress(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                           curl_off_t ulnow) {
        Stream *s = userdata;
        long status = 0;

        if (sbx_docker_stop_requested(s->stop))
                return 1;
        if (!s->connected && curl_easy_getinfo(s->d->curl, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK &&
            status == 200) {
                s->connected = true;
                if (s->on_connected)
                        s->on_connected(s->userdata);
        }
        return 0;
}

void sbx_docker_stop(SbxDockerStop *stop) {
        atomic_store(&stop->requested, true);
        pthread_mutex_lock(&stop->lock);
        if (stop->multi)
                (void) curl_multi_wakeup(stop->multi);
        pthread_mutex_unlock(&stop->lock);
}

bool sbx_docker_stop_requested(SbxDockerStop *stop) {
        return atomic_load(&stop->requested);
}

static void set_stream_multi(SbxDockerStop *stop, CURLM *m) {
        pthread_mutex_lock(&stop->lock);
        stop->multi = m;
        pthread_mutex_unlock(&stop->lock);
}

/* Runs the transfer on a multi handle of its own, so that sbx_docker_stop() can wake
 * its wait: 0 and the transfer's result in *ret (CURLE_OK when stopped or still
 * running), -ENOMEM, or -1 when the multi interface itself failed. */
static int perform_stoppable(CURL *c, SbxDockerStop *stop, CURLcode *ret) {
        CURLM *m = curl_multi_init();
        CURLMcode mc;
        CURLMsg *msg;
        int running = 1, left;

        if (!m)
                return -ENOMEM;
        if ((mc = curl_multi_add_handle(m, c)) != CURLM_OK) {
                curl_multi_cleanup(m);
                return -ENOMEM;
        }
        set_stream_multi(stop, m);
        /* A stop asked for before set_stream_multi() is seen here; one after it wakes the poll. */
        while (mc == CURLM_OK && running > 0 && !sbx_docker_stop_requested(stop)) {
                mc = curl_multi_perform(m, &running);
                if (mc == CURLM_OK && running > 0)
                        mc = curl_multi_poll(m, NULL, 0, 1000, NULL);
        }
        set_stream_multi(stop, NULL);
        *ret = CURLE_OK;
        while ((msg = curl_multi_info_read(m, &left)))
                if (msg->msg == CURLMSG_DONE)
                        *ret = msg->data.result;
        (void) curl_multi_remove_handle(m, c);
        curl_multi_cleanup(m);
        return mc == CURLM_OK ? 0 : -1;
}

/* method path as a stream; ends_well: the end of the stream is its success (a pull's). */
static int stream(SbxDocker *d, const char *method, const char *path, bool ends_well, SbxDockerStreamData on_data,
                  void (*on_connected)(void *userdata), void *userdata, SbxDockerStop *stop, SbxError *error) {
        _cleanup_free_ char *url = NULL;
        Stream s = {
                .d = d, .on_data = on_data, .on_connected = on_connected, .userdata = userdata, .stop = stop,
        };
        CURL *c = d->curl;
        CURLcode cc = CURLE_OK;
        int r;

        if ((r = sbx_docker_negotiate(d, error)) < 0)
                return r;
        if (asprintf(&url, "%s/v%s%s", d->url_base, d->api_version, path) < 0)
                return -ENOMEM;

        curl_easy_reset(c);
        cc = docker_set_transport(d, c);
#define SET(opt, val) do { if (cc == CURLE_OK) cc = curl_easy_setopt(c, opt, val); } while (0)
        SET(CURLOPT_URL, url);
        SET(CURLOPT_NOSIGNAL, 1L);
        SET(CURLOPT_CONNECTTIMEOUT, (long) SBX_DOCKER_CONNECT_TIMEOUT_S);
        SET(CURLOPT_ERRORBUFFER, d->errbuf);
        if (streq(method, "POST")) {
                SET(CURLOPT_POST, 1L);
                SET(CURLOPT_POSTFIELDS, "");
                SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) 0);
        } else
                SET(CURLOPT_HTTPGET, 1L);
        SET(CURLOPT_WRITEFUNCTION, stream_write);
        SET(CURLOPT_WRITEDATA, &s);
        SET(CURLOPT_NOPROGRESS, 0L);
        SET(CURLOPT_XFERINFOFUNCTION, stream_progress);
        SET(CURLOPT_XFERINFODATA, &s);
#undef SET
        if (cc != CURLE_OK)
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "cannot set up a request to Docker");

        d->errbuf[0] = 0;
        d->n_requests++;
        r = perform_stoppable(c, stop, &cc);
        if (sbx_docker_stop_requested(stop))
                return 0;
        if (r == -ENOMEM || s.aborted)
                return -ENOMEM;
        if (r < 0)
                return sbx_error_set(error, SBX_ERROR_BACKEND_UNAVAILABLE, "lost Docker at %s", d->host);
        if (s.status != 0 && s.status != 200)
                return sbx_docker_http_error(s.status, s.refusal, s.refusal_size, error);
        if (cc != CURLE_OK)
                return sbx_error_set(error, SBX_ERROR_BACKEND_UNAVAILABLE, "lost Docker at %s: %s", d->host,
                                     d->errbuf[0] ? d->errbuf : curl_easy_strerror(cc));
        if (ends_well)
                return 0;
        return sbx_error_set(error, SBX_ERROR_BACKEND_UNAVAILABLE, "Docker at %s ended the stream", d->host);
}

int sbx_docker_get_stream(SbxDocker *d, const char *path, SbxDockerStreamData on_data,
                          void (*on_connected)(void *userdata), void *userdata, SbxDockerStop *stop,
                          SbxError *error) {
        return stream(d, "GET", path, false, on_data, on_connected, userdata, stop, error);
}

int sbx_docker_post_stream(SbxDocker *d, const char *path, SbxDockerStreamData on_data, void *userdata,
                           SbxDockerStop *stop, SbxError *error) {
        return stream(d, "POST", path, true, on_data, NULL, userdata, stop, error);
}
