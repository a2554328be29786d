#pragma once
#include "state.h"
void middle(void);
