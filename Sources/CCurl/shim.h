#ifndef FIELDSHEET_CCURL_SHIM_H
#define FIELDSHEET_CCURL_SHIM_H

#include <curl/curl.h>

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

#endif
