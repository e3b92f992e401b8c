#ifndef FIELDSHEET_CCURL_SHIM_H
#define FIELDSHEET_CCURL_SHIM_H

#include <curl/curl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

// Swift cannot call C variadic functions, so curl_easy_setopt and curl_easy_getinfo
// are wrapped once per argument type.

static inline CURLcode fs_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode fs_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode fs_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode fs_curl_setopt_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

typedef size_t (*fs_curl_data_callback)(char *buffer, size_t size, size_t count, void *userdata);

static inline CURLcode fs_curl_setopt_data_callback(CURL *handle, CURLoption option, fs_curl_data_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

typedef int (*fs_curl_progress_callback)(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow);

static inline CURLcode fs_curl_setopt_progress_callback(CURL *handle, CURLoption option, fs_curl_progress_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

static inline CURLcode fs_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode fs_curl_getinfo_double(CURL *handle, CURLINFO info, double *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode fs_curl_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}

typedef curl_socket_t (*fs_curl_opensocket_callback)(void *userdata, curlsocktype purpose, struct curl_sockaddr *address);

static inline CURLcode fs_curl_setopt_opensocket_callback(CURL *handle, fs_curl_opensocket_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, callback);
}

// The address libcurl is about to connect to, as 4 (IPv4) or 16 (IPv6) bytes into `out`; returns how many
// (0 for any other family).
static inline int fs_curl_sockaddr_bytes(const struct curl_sockaddr *address, unsigned char out[16]) {
    if (address->family == AF_INET && address->addrlen >= sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)&address->addr;
        memcpy(out, &v4->sin_addr, 4);
        return 4;
    }
    if (address->family == AF_INET6 && address->addrlen >= sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)&address->addr;
        memcpy(out, &v6->sin6_addr, 16);
        return 16;
    }
    return 0;
}

// Opens the socket libcurl asked for (what it does itself without an open-socket callback).
static inline curl_socket_t fs_curl_open_socket(const struct curl_sockaddr *address) {
    return socket(address->family, address->socktype, address->protocol);
}

static inline curl_socket_t fs_curl_socket_bad(void) {
    return CURL_SOCKET_BAD;
}

// libcurl's multi interface driven by an epoll set (curl_multi_socket_action): the server's webhook sender.

static inline CURLMcode fs_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

static inline CURLMcode fs_curl_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value) {
    return curl_multi_setopt(multi, option, value);
}

typedef int (*fs_curl_multi_socket_callback)(CURL *easy, curl_socket_t socket, int what, void *userdata, void *socketdata);

static inline CURLMcode fs_curl_multi_setopt_socket_callback(CURLM *multi, fs_curl_multi_socket_callback callback) {
    return curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, callback);
}

typedef int (*fs_curl_multi_timer_callback)(CURLM *multi, long timeout_ms, void *userdata);

static inline CURLMcode fs_curl_multi_setopt_timer_callback(CURLM *multi, fs_curl_multi_timer_callback callback) {
    return curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, callback);
}

// The next finished transfer of `multi`: 1 with its handle and result, 0 when none is left.
static inline int fs_curl_multi_next_done(CURLM *multi, CURL **easy, CURLcode *result) {
    int left = 0;
    CURLMsg *message;
    while ((message = curl_multi_info_read(multi, &left)) != NULL) {
        if (message->msg == CURLMSG_DONE) {
            *easy = message->easy_handle;
            *result = message->data.result;
            return 1;
        }
    }
    return 0;
}

// Watches `socket` in the epoll set `epoll` as libcurl's socket callback asks (`what`: CURL_POLL_IN, _OUT,
// _INOUT or _REMOVE); the socket itself is the event's data. Returns epoll_ctl's result.
static inline int fs_epoll_watch(int epoll, int socket, int what) {
    struct epoll_event event;
    memset(&event, 0, sizeof event);
    event.data.fd = socket;
    if (what == CURL_POLL_REMOVE) {
        return epoll_ctl(epoll, EPOLL_CTL_DEL, socket, &event);
    }
    event.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0);
    if (epoll_ctl(epoll, EPOLL_CTL_MOD, socket, &event) == 0) return 0;
    if (errno != ENOENT) return -1;
    return epoll_ctl(epoll, EPOLL_CTL_ADD, socket, &event);
}

// Waits up to `timeout_ms` (-1: no limit) for at most `capacity` (≤ 64) ready sockets of `epoll`; writes each
// one's descriptor and libcurl's CURL_CSELECT_* flags for it. Returns how many, 0 on a timeout, -1 on an error
// (EINTR included: the caller waits again).
static inline int fs_epoll_wait(int epoll, int *sockets, int *flags, int capacity, int timeout_ms) {
    struct epoll_event events[64];
    if (capacity > 64) capacity = 64;
    int count = epoll_wait(epoll, events, capacity, timeout_ms);
    for (int i = 0; i < count; i++) {
        sockets[i] = events[i].data.fd;
        flags[i] = ((events[i].events & EPOLLIN) ? CURL_CSELECT_IN : 0) | ((events[i].events & EPOLLOUT) ? CURL_CSELECT_OUT : 0)
            | ((events[i].events & (EPOLLERR | EPOLLHUP)) ? CURL_CSELECT_ERR : 0);
    }
    return count;
}

// An eventfd (non-blocking, close-on-exec) to wake the epoll wait from another thread.
static inline int fs_eventfd_open(void) {
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

static inline void fs_eventfd_signal(int fd) {
    uint64_t one = 1;
    ssize_t written = write(fd, &one, sizeof one);
    (void)written;  // a full counter already wakes the reader
}

static inline void fs_eventfd_drain(int fd) {
    uint64_t value;
    ssize_t got = read(fd, &value, sizeof value);
    (void)got;
}

static inline int fs_epoll_open(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

#endif
