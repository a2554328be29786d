#include "middle.h"
void middle(void) { }
