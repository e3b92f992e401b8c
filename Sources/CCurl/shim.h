#ifndef FIELDSHEET_CCURL_SHIM_H
#define FIELDSHEET_CCURL_SHIM_H

#include <curl/curl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

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

#endif
