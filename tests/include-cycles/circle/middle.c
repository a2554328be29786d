#include "middle.h"
#include "top.h"
void middle(void) { }
