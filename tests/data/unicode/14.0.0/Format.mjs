import decodeRanges from '../../decode-ranges.mjs';

export default decodeRanges('itAwVRFVAi_AgwAl_BhPAw8qAwf7EZEgwEAJ4N6OAj4CxDAAOAyNhI4IhmDxTOH7C6FAdhf');
