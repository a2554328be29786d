#pragma once
#include "state.h"
#include <stdio.h>
void top(void);
