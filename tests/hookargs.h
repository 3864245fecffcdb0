/* Test programs take the paths they force as arguments NAME=VALUE (a hook
 * of src/core/test_hooks.h, e.g. radix_cuda_small=0): hook_args() sets
 * each, removes it from argv and remembers it for hook_arg(). */
#ifndef GPK_TEST_HOOKARGS_H
#define GPK_TEST_HOOKARGS_H

#include "core/test_hooks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
    const char *name;
    size_t len;
    const char *value;
} hook_given[16];
static int hook_count;

/* Exits 2 on an unknown hook or value. */
static inline void hook_args(int *argc, char **argv)
{
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (!eq || argv[i][0] == '-') {
            argv[out++] = argv[i];
            continue;
        }
        *eq = '\0';
        if (gpk__test_set(argv[i], eq + 1) != 0 || hook_count == 16) {
            fprintf(stderr, "unknown hook or value: %s=%s\n", argv[i], eq + 1);
            exit(2);
        }
        hook_given[hook_count].name = argv[i];
        hook_given[hook_count].len = strlen(argv[i]);
        hook_given[hook_count++].value = eq + 1;
        printf("hook %s=%s\n", argv[i], eq + 1);
    }
    *argc = out;
    argv[out] = NULL;
}

/* The value given for hook `name`, else NULL. */
static inline const char *hook_arg(const char *name)
{
    for (int i = 0; i < hook_count; i++)
        if (!strcmp(hook_given[i].name, name)) return hook_given[i].value;
    return NULL;
}

#endif
