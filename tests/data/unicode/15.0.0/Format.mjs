import decodeRanges from '../../decode-ranges.mjs';

export default decodeRanges('itAwVRFVAi_AgwAl_BhPAw8qAwf7EZEgwEAJ4N6OAj4CxDAAOAyNhP4IhfDxTOH7C6FAdhf');
