/* Enum names: the lookups behind the *_name and *_parse functions whose
 * tables have aliases (internal.h, gpk__name_value). */
#include "internal.h"

#include <strings.h>

const char *gpk__name_of(const gpk__name_value *table, size_t n, int value)
{
    for (size_t i = 0; i < n; i++)
        if (table[i].value == value) return table[i].name;
    return "unknown";
}

int gpk__name_lookup(const gpk__name_value *table, size_t n, const char *name, int *value)
{
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(name, table[i].name) == 0) {
            *value = table[i].value;
            return 1;
        }
    return 0;
}
