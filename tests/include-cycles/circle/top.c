#include "top.h"
#include "middle.h"
void top(void) { middle(); }
